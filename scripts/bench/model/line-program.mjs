// A benchmark program in another process that answers one command per line with one JSON line (the native program
// of cpp/bench/model_bench.cc, train_torch.py): the first line it prints is its "ready" answer, then one answer per
// command, in order. Its stderr goes to ours.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

export class LineProgram {
  #waiters = [];
  constructor(command, args, options = {}) {
    this.name = command;
    this.proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], ...options });
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => this.#waiters.shift()?.(line));
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
    /** The program's first line, parsed (e.g. { ready: true, … }). */
    this.ready = Promise.race([
      new Promise((resolve) => this.#waiters.push((l) => resolve(JSON.parse(l)))),
      this.exited.then((code) => Promise.reject(new Error(`${command} exited (${code}) before it was ready`))),
    ]);
  }
  /** Sends one command; its answer, parsed (an answer { error } throws). */
  async cmd(line) {
    const answer = await new Promise((resolve, reject) => {
      this.#waiters.push(resolve);
      this.exited.then((code) => reject(new Error(`${this.name} exited (${code}) during: ${line}`)));
      this.proc.stdin.write(`${line}\n`);
    });
    const r = JSON.parse(answer);
    if (r.error) throw new Error(`${this.name}: ${line}: ${r.error}`);
    return r;
  }
  async quit() {
    this.proc.stdin.end('quit\n');
    await this.exited;
  }
}
