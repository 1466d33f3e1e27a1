/**
 * The messages a co-editing client may send, checked whole before Hocuspocus reads them: a
 * message that does not decode (a broken or hostile client) closes its connection instead of
 * reaching the server's handlers, and clients never broadcast free text to the other editors
 * (the stateless messages are the server's, to tell editors what happened).
 *
 * Each message is `<document name><type>…` in lib0's variable-length encoding (Hocuspocus's
 * protocol: types below); sync messages carry a Yjs state vector or update, awareness messages an
 * awareness update (client id, clock, JSON state per client).
 */
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';

const SYNC = 0;
const AWARENESS = 1;
const AUTH = 2;
const QUERY_AWARENESS = 3;
const SYNC_REPLY = 4;
const CLOSE = 7;

const SYNC_STEP_1 = 0;
const SYNC_STEP_2 = 1;
const SYNC_UPDATE = 2;

/** Whether `data` is a whole, well-formed message a client may send. */
export function isClientMessage(data: Uint8Array): boolean {
  try {
    const decoder = decoding.createDecoder(data);
    decoding.readVarString(decoder);
    const type = decoding.readVarUint(decoder);
    switch (type) {
      case SYNC:
      case SYNC_REPLY: {
        const step = decoding.readVarUint(decoder);
        const payload = decoding.readVarUint8Array(decoder);
        if (step === SYNC_STEP_1) Y.decodeStateVector(payload);
        else if (step === SYNC_STEP_2 || step === SYNC_UPDATE) Y.parseUpdateMeta(payload);
        else return false;
        break;
      }
      case AWARENESS: {
        const update = decoding.createDecoder(decoding.readVarUint8Array(decoder));
        const count = decoding.readVarUint(update);
        for (let i = 0; i < count; i++) {
          decoding.readVarUint(update);
          decoding.readVarUint(update);
          JSON.parse(decoding.readVarString(update));
        }
        if (decoding.hasContent(update)) return false;
        break;
      }
      case AUTH:
        decoding.readVarUint(decoder);
        decoding.readVarString(decoder);
        break;
      case QUERY_AWARENESS:
      case CLOSE:
        break;
      default:
        return false;
    }
    return !decoding.hasContent(decoder);
  } catch {
    return false;
  }
}
