/**
 * `Files-Glob` patterns (ConfigHub): `*` any characters including `/`, `?` one character,
 * `{a,b}` either alternative (nested braces allowed; an unclosed `{` closes at the end, `,` and
 * `}` outside braces are plain characters); the pattern matches the whole path.
 *
 * Why not a regular expression: JavaScript's engine backtracks, and `{*,*}{*,*}…X` made one
 * request take seconds per group, exponentially, on the event loop. Here the pattern becomes a
 * Thompson automaton (a few states per pattern character, braces included, built without
 * recursion) run as a set of states over the path: time linear in pattern × path, whatever the
 * pattern. Sets met once are kept as DFA states (bounded), so listing many files costs about one
 * step per character.
 */

import { GlobTooLongError } from './errors.js';

/** Longest pattern accepted, in characters (a longer one is a 400, see MAX_GLOB_LENGTH's users). */
export const MAX_GLOB_LENGTH = 256;

const enum Kind {
  Char,
  Any,
  Star,
  Epsilon,
  Split,
  Match,
}

interface State {
  readonly kind: Kind;
  /** The character of a Char state. */
  readonly char?: string;
  /** The next state (Char, Any and Star on their character, Epsilon at once); -1 until patched. */
  next: number;
  /** The alternatives of a Split state. */
  readonly outs?: number[];
}

/** Largest number of DFA states kept per glob; beyond it, steps are computed without keeping them. */
const MAX_DFA_STATES = 4096;

interface DfaState {
  readonly states: readonly number[];
  readonly accepting: boolean;
  /** Transitions on ASCII characters by code, others by code point. */
  readonly ascii: (DfaState | undefined)[];
  readonly other: Map<number, DfaState>;
}

export class Glob {
  private readonly states: State[] = [];
  private readonly matchState: number;
  private readonly dfa = new Map<string, DfaState>();
  private readonly start: DfaState;
  /** Marks for closure(): a state is in the set being built when its mark equals `generation`. */
  private readonly marks: Uint32Array;
  private generation = 0;

  constructor(readonly pattern: string) {
    const chars = Array.from(pattern);
    if (chars.length > MAX_GLOB_LENGTH) throw new GlobTooLongError(chars.length, MAX_GLOB_LENGTH);
    let dangling: number[] = [];
    const add = (state: State): number => {
      this.states.push(state);
      return this.states.length - 1;
    };
    const patch = (to: number) => {
      for (const from of dangling) this.states[from].next = to;
    };
    const startState = add({ kind: Kind.Epsilon, next: -1 });
    dangling = [startState];
    // One frame per open brace: its Split state and the ends of its finished alternatives.
    const frames: { split: number; ends: number[] }[] = [];
    const step = (state: State) => {
      const id = add(state);
      patch(id);
      dangling = [id];
    };
    const alternative = (frame: { split: number }) => {
      const id = add({ kind: Kind.Epsilon, next: -1 });
      this.states[frame.split].outs!.push(id);
      dangling = [id];
    };
    const close = () => {
      const frame = frames.pop()!;
      dangling = [...frame.ends, ...dangling];
    };
    for (const char of chars) {
      if (char === '*') step({ kind: Kind.Star, next: -1 });
      else if (char === '?') step({ kind: Kind.Any, next: -1 });
      else if (char === '{') {
        const split = add({ kind: Kind.Split, next: -1, outs: [] });
        patch(split);
        const frame = { split, ends: [] as number[] };
        frames.push(frame);
        alternative(frame);
      } else if (char === ',' && frames.length > 0) {
        const frame = frames[frames.length - 1];
        frame.ends.push(...dangling);
        alternative(frame);
      } else if (char === '}' && frames.length > 0) close();
      else step({ kind: Kind.Char, char, next: -1 });
    }
    while (frames.length > 0) close();
    this.matchState = add({ kind: Kind.Match, next: -1 });
    patch(this.matchState);
    this.marks = new Uint32Array(this.states.length);
    this.start = this.dfaState(this.closure([startState]));
  }

  /** Whether the whole path matches. */
  test(path: string): boolean {
    let current = this.start;
    for (let i = 0; i < path.length; i++) {
      const code = path.codePointAt(i)!;
      if (code > 0xffff) i++;
      let next = code < 128 ? current.ascii[code] : current.other.get(code);
      if (!next) {
        next = this.dfaState(this.stepOn(current.states, String.fromCodePoint(code)));
        if (this.dfa.size <= MAX_DFA_STATES) {
          if (code < 128) current.ascii[code] = next;
          else current.other.set(code, next);
        }
      }
      current = next;
      if (current.states.length === 0) return false;
    }
    return current.accepting;
  }

  /** The states reached from `from` through epsilon moves (Epsilon, Split, and a Star's exit), sorted. */
  private closure(from: readonly number[]): number[] {
    const generation = this.nextGeneration();
    const out: number[] = [];
    const stack = [...from];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (this.marks[id] === generation) continue;
      this.marks[id] = generation;
      const state = this.states[id];
      if (state.kind === Kind.Epsilon) stack.push(state.next);
      else if (state.kind === Kind.Split) stack.push(...state.outs!);
      else {
        out.push(id);
        if (state.kind === Kind.Star) stack.push(state.next);
      }
    }
    return out.sort((a, b) => a - b);
  }

  private stepOn(states: readonly number[], char: string): number[] {
    const targets: number[] = [];
    for (const id of states) {
      const state = this.states[id];
      if (state.kind === Kind.Star) targets.push(id);
      else if (state.kind === Kind.Any || (state.kind === Kind.Char && state.char === char)) targets.push(state.next);
    }
    return this.closure(targets);
  }

  private dfaState(states: number[]): DfaState {
    const id = states.join(',');
    const known = this.dfa.get(id);
    if (known) return known;
    const made: DfaState = {
      states,
      accepting: states.includes(this.matchState),
      ascii: new Array(128),
      other: new Map(),
    };
    if (this.dfa.size < MAX_DFA_STATES) this.dfa.set(id, made);
    return made;
  }

  private nextGeneration(): number {
    if (this.generation === 0xffffffff) {
      this.marks.fill(0);
      this.generation = 0;
    }
    return ++this.generation;
  }
}

/** The pattern compiled; a GlobTooLongError beyond MAX_GLOB_LENGTH characters. */
export function compileGlob(pattern: string): Glob {
  return new Glob(pattern);
}
