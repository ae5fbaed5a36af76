/** The machine and software a run measured, printed with every table so figures are never quoted without it. */
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { gitVersion } from './gitPlumbing.js';

export interface Machine {
  readonly date: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly git: string;
  /**
   * 1, 5 and 15 minute load averages when the run ended: the machine may be shared (other people's
   * builds and tests), and a load near the core count explains noisy p99s.
   */
  readonly loadAverage: readonly number[];
}

export async function describeMachine(): Promise<Machine> {
  const processors = cpus();
  return {
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    cpu: processors[0]?.model.trim() ?? 'unknown',
    cores: processors.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    git: await gitVersion(),
    loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

export function machineLine(machine: Machine): string {
  return (
    `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}, git ${machine.git}; ` +
    `load average at the end ${machine.loadAverage.join(' / ')} (1 / 5 / 15 min)`
  );
}
