/** The commands that are clients of a cfghub server: pull, get, set, unset, history, diff. */
import type { Command } from 'commander';
import { addHistoryCommands } from './historyCommands.js';
import { addKeyCommands } from './keyCommands.js';
import { addPullCommand } from './pullCommands.js';

export function addClientCommands(program: Command): void {
  addPullCommand(program);
  addKeyCommands(program);
  addHistoryCommands(program);
}
