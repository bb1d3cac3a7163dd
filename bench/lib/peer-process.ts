/** Starts the synthetic peer (`../peer.ts`) in its own Node process and stops it afterwards. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { trackChild } from './executors';

export async function withSyntheticPeer<T>(body: (url: string) => Promise<T>): Promise<T> {
  const child = trackChild(spawn(process.execPath, [join(__dirname, '..', 'peer.js')], { stdio: ['pipe', 'pipe', 'inherit'] }));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        text += chunk;
        const newline = text.indexOf('\n');
        if (newline >= 0) resolve(text.slice(0, newline).trim());
      });
      child.once('exit', (code) => reject(new Error(`synthetic peer exited early (code ${String(code)})`)));
      child.once('error', reject);
    });
    return await body(url);
  } finally {
    child.stdin?.end();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
  }
}
