#!/bin/sh
# Starts workerd for one integration script runtime (src/integrations/sandbox-limits.ts) under a
# hard memory bound. Miniflare runs this file instead of workerd (MINIFLARE_WORKERD_PATH) with
# workerd's own arguments; exec keeps the process id, so Folio watches and kills workerd itself.
#
#   FOLIO_WORKERD          the workerd binary to run
#   FOLIO_WORKERD_DATA_KB  RLIMIT_DATA in KiB: private writable memory past it is refused
#
# RLIMIT_DATA counts private writable mappings (Linux 4.7 and later). V8's large PROT_NONE
# reservations (pointer-compression cage, sandbox) do not count; its heap pages, array buffers
# and malloc's memory count from the moment they are made writable, touched or not.

if [ -n "$FOLIO_WORKERD_DATA_KB" ]; then
  # Fails only when a lower hard limit is already set: that one bounds workerd then.
  ulimit -d "$FOLIO_WORKERD_DATA_KB" 2>/dev/null
fi
# Thread stacks are private writable memory too: an unlimited stack limit would give every
# workerd thread glibc's 32 MB default stack, counted against the bound. 8 MB is the usual limit.
stack=$(ulimit -s)
if [ "$stack" = unlimited ] || [ "$stack" -gt 8192 ]; then
  ulimit -s 8192 2>/dev/null
fi
exec "$FOLIO_WORKERD" "$@"
