import { chmodSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { HttpError } from './errors.ts';

/**
 * A local channel between `folio serve` and the administration commands, for the embedded
 * database: PGlite allows one process, so while a server holds DATA_DIR a command asks that server
 * to run it instead of opening the database itself.
 *
 * It is a Unix socket in DATA_DIR with mode 0600: only the OS user who runs the server (and root)
 * can connect, which is the same trust as reading the database files. The protocol is one JSON line
 * each way: the request, then `{ok: true, result}` or `{ok: false, status, message}`.
 */
export const ADMIN_SOCKET_NAME = 'folio.sock';

/** Longest socket path Linux and macOS accept (sun_path is 104 to 108 bytes, NUL included). */
const MAX_SOCKET_PATH = 103;
const MAX_REQUEST_BYTES = 64 * 1024;
/** A client that connects and sends nothing is dropped after this long, so shutdown never waits on it. */
const IDLE_MS = 10_000;
/** How long a command waits for the server's answer; nothing is left idle that long. */
const ANSWER_TIMEOUT_MS = 120_000;

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET_NAME);
}

export type AdminHandler = (request: unknown) => Promise<unknown>;

export interface AdminSocket {
  path: string;
  /** Stops accepting, lets the commands in progress answer, removes the socket file. */
  close(): Promise<void>;
}

export class AdminSocketPathTooLong extends Error {}

type Answer = { ok: true; result: unknown } | { ok: false; status: number; message: string };

function answer(socket: Socket, body: Answer): void {
  socket.end(JSON.stringify(body) + '\n');
}

function serveConnection(socket: Socket, handler: AdminHandler, onError: (err: unknown) => void): void {
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  let received = '';
  let handled = false;
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    if (handled) return;
    received += chunk;
    if (received.length > MAX_REQUEST_BYTES) {
      handled = true;
      answer(socket, { ok: false, status: 413, message: 'Request too large' });
      return;
    }
    const end = received.indexOf('\n');
    if (end < 0) return;
    handled = true;
    socket.setTimeout(0);
    let request: unknown;
    try {
      request = JSON.parse(received.slice(0, end));
    } catch {
      answer(socket, { ok: false, status: 400, message: 'Malformed request: one JSON line expected' });
      return;
    }
    handler(request).then(
      (result) => answer(socket, { ok: true, result }),
      (err) => {
        if (err instanceof HttpError) return answer(socket, { ok: false, status: err.statusCode, message: err.message });
        onError(err);
        answer(socket, { ok: false, status: 500, message: err instanceof Error ? err.message : String(err) });
      },
    );
  });
}

/**
 * Listens on DATA_DIR/folio.sock. The caller must hold the data directory's lock: a socket file
 * found there was left by a process that died, and is replaced.
 */
export async function listenAdminSocket(
  dataDir: string,
  handler: AdminHandler,
  onError: (err: unknown) => void = () => {},
): Promise<AdminSocket> {
  const path = adminSocketPath(dataDir);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new AdminSocketPathTooLong(
      `${path} is longer than a Unix socket path may be (${MAX_SOCKET_PATH} bytes): ` +
        'administration commands cannot reach this server; use a shorter DATA_DIR',
    );
  }
  rmSync(path, { force: true });
  const server = createServer((socket) => serveConnection(socket, handler, onError));
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // The socket file is created by bind(), which listen() calls synchronously for a path: with this
  // umask it is born 0600, so no other user can connect even for an instant.
  const previous = process.umask(0o177);
  try {
    server.listen(path);
  } finally {
    process.umask(previous);
  }
  await listening;
  chmodSync(path, 0o600);
  let closing: Promise<void> | undefined;
  return {
    path,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The file goes now: a command started during shutdown opens no connection to a closing server.
        rmSync(path, { force: true });
      })),
  };
}

/**
 * Sends one request to the server listening in `dataDir`. `reached: false` when no server listens
 * there (no socket, or one left by a process that died); a refusal by the server is thrown as an
 * HttpError with its status and message.
 */
export async function askAdminSocket(
  dataDir: string,
  request: unknown,
  opts: { answerTimeoutMs?: number } = {},
): Promise<{ reached: false } | { reached: true; result: unknown }> {
  const timeout = opts.answerTimeoutMs ?? ANSWER_TIMEOUT_MS;
  const path = adminSocketPath(dataDir);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return { reached: false };
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let connected = false;
    let received = '';
    socket.setEncoding('utf8');
    // A server that accepted the connection but never answers (stopped under a debugger, say).
    // 0: no limit (a backup of a large database takes as long as it takes).
    if (timeout > 0) {
      socket.setTimeout(timeout, () => {
        socket.destroy();
        reject(new Error(`The server listening on ${path} did not answer within ${timeout / 1000} s`));
      });
    }
    socket.on('connect', () => {
      connected = true;
      socket.write(JSON.stringify(request) + '\n');
    });
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' || err.code === 'ENOTSOCK')) resolve({ reached: false });
      else reject(new Error(`The server's administration socket ${path} failed: ${err.message}`));
    });
    socket.on('end', () => {
      let body: Answer;
      try {
        body = JSON.parse(received);
      } catch {
        reject(new Error(`The server closed its administration socket ${path} without answering`));
        return;
      }
      if (body.ok) resolve({ reached: true, result: body.result });
      else reject(new HttpError(body.status, body.message));
    });
  });
}
