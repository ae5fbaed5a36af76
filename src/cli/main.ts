#!/usr/bin/env node
/** Entry point of the `cfghub` command; the commands themselves are in program.ts. */

// A push fsyncs its objects, their folders and the ref lock in parallel; libuv's default pool of
// 4 threads would queue them. Must be set before the first use of the pool, so before the imports.
process.env.UV_THREADPOOL_SIZE ??= '16';

const { main } = await import('./program.js');
process.exitCode = await main(process.argv.slice(2));
