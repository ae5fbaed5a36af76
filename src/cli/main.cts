#!/usr/bin/env node
/**
 * Entry point of the `cfghub` command; the commands themselves are in program.ts.
 *
 * A push fsyncs its objects, their folders and the ref lock in parallel, and libuv's default pool
 * of 4 threads would queue them. The pool size must be set before the pool's first use, which
 * loading an ES module already is, so this entry is CommonJS and loads the rest afterwards.
 */
process.env.UV_THREADPOOL_SIZE ??= '16';

import('./program.js').then(async ({ main }) => {
  process.exitCode = await main(process.argv.slice(2));
});
