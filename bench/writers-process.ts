import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** The process of bench/write-ceiling-writers.ts, driven over IPC (its commands are described there). */
export class Writers {
  private constructor(private readonly child: ChildProcess, private readonly bench: string) {}

  /** `bench` names the bench in errors. */
  static start(bench: string): Writers {
    const script = path.join(__dirname, `write-ceiling-writers${path.extname(__filename)}`);
    return new Writers(fork(script, [], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }), bench);
  }

  get pid(): number {
    return this.child.pid!;
  }

  ask<T>(message: object, answer: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const listener = (m: { cmd: string; error?: string }) => {
        if (m.cmd === answer) {
          this.child.off('message', listener);
          this.child.off('exit', gone);
          resolve(m as T);
        } else if (m.cmd === 'failed') {
          this.child.off('message', listener);
          this.child.off('exit', gone);
          reject(new Error(`${this.bench} writers: ${m.error}`));
        }
      };
      const gone = (code: number | null) => reject(new Error(`${this.bench} writers exited (${code})`));
      this.child.on('message', listener);
      this.child.once('exit', gone);
      this.child.send(message);
    });
  }

  exit(): void {
    if (this.child.connected) this.child.send({ cmd: 'exit' });
  }
}
