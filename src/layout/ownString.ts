/**
 * A string that holds its own characters. V8 makes a substring of 13 or more characters a view
 * of the string it was cut from (a "sliced string"), so a value cut from a key document kept the
 * document's whole text alive as long as a snapshot held the value: 31 MB of document texts for
 * 100 repositories of 1,000 keys, a tenth of the server's memory. Concatenating makes a new string
 * and slicing that flattens it, one copy of the characters: about 40 ns.
 */
export function ownString(text: string): string {
  return ` ${text}`.slice(1);
}
