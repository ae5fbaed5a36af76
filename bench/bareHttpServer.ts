/** Starts bench/bare-http-server.mjs serving given bytes; stopped by its pid. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from './childProcesses.js';
import { makeTempFolder } from './tempFolders.js';

const SCRIPT = fileURLToPath(new URL('./bare-http-server.mjs', import.meta.url));

export interface BareHttpServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startBareHttpServer(body: Buffer): Promise<BareHttpServer> {
  const file = join(makeTempFolder('bare-http'), 'body.json');
  writeFileSync(file, body);
  const child = track(spawn(process.execPath, [SCRIPT, file], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare-http-server.mjs exited (${code}) before listening`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  return { url: `http://127.0.0.1:${port.trim()}/`, close: () => stopChild(child) };
}
