/**
 * The published ConfigHub Java client (ConfigHubPub/JavaAPI v1.3.0) against cfghub, on the wire
 *: every request is written byte for byte as that client's HttpURLConnection sends it
 * (as read from the client's published source: its User-Agent and Accept, the empty headers of a
 * pull, Cache-Control and Pragma on a push, `Client-Version: v1.3.0`, booleans as strings, Map and
 * List values as JSON, both URL forms), over a plain socket, and every answer is read the way the
 * client reads it: a push by its status and ETag only, a pull by joining the body's lines and
 * taking `context` (which must equal what was sent), `account`, `repo`, each property's `val`,
 * `type`, `deprecated` and `encryption`, and each file's `content`.
 */
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  cliOk,
  cliWithInput,
  createOpenRepository,
  git,
  gitdirOf,
  headOf,
  pushTo,
  serverForFile,
} from '../../support/harness.js';
import { commitTime, isoOf, nextSecondAfter } from '../../support/reads.js';

const REPO = 'Acme/JavaApp';
const GROUP = 'Secrets'; // created with this spelling; the application names it `secrets`
const PASSWORD = 'java-group-pass-1';
const SECRET = 'j4va-db-s3cret';
const FILE_SECRET = 'java-file-secret-77';

/** What HttpURLConnection adds to every request (JDK 17). */
const USER_AGENT = 'Java/17.0.15';
const ACCEPT = 'text/html, image/gif, image/jpeg, */*; q=0.2';

const fixture = serverForFile();
let port: number;
let token: string;

interface WireAnswer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: Buffer;
}

/**
 * Sends one request exactly as given (header lines in this order, empty values included) on a
 * fresh connection, and reads the answer (its Content-Length, or no body for a 304).
 */
function wire(method: string, path: string, headers: [string, string][], body?: Buffer): Promise<WireAnswer> {
  const head = [
    `${method} ${path} HTTP/1.1`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    `User-Agent: ${USER_AGENT}`,
    `Host: 127.0.0.1:${port}`,
    `Accept: ${ACCEPT}`,
    'Connection: keep-alive',
    ...(body ? [`Content-Length: ${body.length}`] : []),
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no complete answer to ${method} ${path}`)));
    socket.on('error', reject);
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = received.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      const answerHeaders = new Map(
        lines
          .slice(1)
          .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      if (answerHeaders.has('transfer-encoding'))
        return socket.destroy(new Error('the answer is chunked; the test expects a Content-Length'));
      const length = status === 304 ? 0 : Number(answerHeaders.get('content-length') ?? 0);
      if (received.length < end + 4 + length) return;
      socket.end();
      resolve({ status, headers: answerHeaders, body: received.subarray(end + 4, end + 4 + length) });
    });
    socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body ?? Buffer.alloc(0)]));
  });
}

/** The client's body: Gson's text, written by DataOutputStream.writeBytes (each character's low byte). */
const writeBytes = (text: string) => Buffer.from(Array.from(text, (c) => c.charCodeAt(0) & 0xff));

/** A push as PushQueue.flush sends it: on the path form, or on /rest/push with the token. */
function javaPush(json: string, form: 'path' | 'token' = 'path'): Promise<WireAnswer> {
  return wire(
    'POST',
    form === 'path' ? `/rest/push/${REPO}` : '/rest/push',
    [
      ...(form === 'token' ? ([['Client-Token', token]] as [string, string][]) : []),
      ['Application-Name', 'JavaApp'],
      ['Content-Type', 'application/json'],
      ['Client-Version', 'v1.3.0'],
      ['Cache-Control', 'no-cache'],
      ['Pragma', 'no-cache'],
    ],
    writeBytes(json),
  );
}

interface PullSettings {
  context: string;
  date?: string;
  tag?: string;
  applicationName?: string;
  groups?: Record<string, string>;
  includeComments?: boolean;
  includeContext?: boolean;
  form?: 'path' | 'token';
}

/** A pull as ConfigHub.pull sends it: every header on every pull, empty when the application did not set it. */
function javaPull(settings: PullSettings): Promise<WireAnswer> {
  return wire('GET', settings.form === 'token' ? '/rest/pull' : `/rest/pull/${REPO}`, [
    ...(settings.form === 'token' ? ([['Client-Token', token]] as [string, string][]) : []),
    ['Context', settings.context],
    ['Repository-Date', settings.date ?? ''],
    ['Tag', settings.tag ?? ''],
    ['Application-Name', settings.applicationName ?? ''],
    ['Security-Profile-Auth', settings.groups ? JSON.stringify(settings.groups) : ''],
    ['Include-Comments', settings.includeComments ? 'true' : 'false'],
    ['Include-Value-Context', settings.includeContext ? 'true' : 'false'],
  ]);
}

/** A property as the client keeps it: its typed value (by `type`, or text when encrypted), the flags it reads. */
interface ClientProperty {
  readonly value: unknown;
  readonly deprecated: boolean;
  readonly encryptionGroup: string | null;
}

interface ClientConfiguration {
  readonly account: string;
  readonly repo: string;
  readonly properties: Map<string, ClientProperty>;
  readonly files: Map<string, string>;
}

/** Gson's getAsString of a JSON primitive (a boolean `true` reads as "true"); anything else fails. */
function asString(element: unknown): string {
  if (typeof element === 'string') return element;
  if (typeof element === 'number' || typeof element === 'boolean') return String(element);
  throw new Error(`not a JSON primitive: ${JSON.stringify(element)}`);
}

/** Gson's getAsBoolean: a boolean, or Boolean.parseBoolean of the text. */
const asBoolean = (element: unknown) =>
  typeof element === 'boolean' ? element : asString(element).toLowerCase() === 'true';

/** Integer.parseInt / getAsInt: a whole number in 32 bits, else the configuration is invalid. */
function asInteger(element: unknown): number {
  const text = asString(element);
  if (!/^[+-]?\d{1,10}$/.test(text) || Math.abs(Number(text)) > 2 ** 31) throw new Error(`not an Integer: ${text}`);
  return Number(text);
}

/**
 * Reads a pull's answer as the client does: the body's lines joined (BufferedReader.readLine drops
 * the line ends), parsed; discarded unless `context` is exactly what was sent; then `account`,
 * `repo`, each property by its `type` (JSON, FileRef and FileEmbed keys are dropped) or as text
 * with its encryption group, and each file's `content`.
 */
function readAsJavaClient(answer: WireAnswer, sentContext: string): ClientConfiguration {
  expect(answer.status, answer.body.toString('utf8')).toBe(200);
  const data = JSON.parse(answer.body.toString('utf8').replace(/\r?\n/g, ''));
  if (asString(data.context) !== sentContext)
    throw new Error(`Requested context '${sentContext}' is not the same as context '${data.context}'`);
  if (data.error !== undefined) throw new Error(asString(data.error));
  const properties = new Map<string, ClientProperty>();
  for (const [key, element] of Object.entries<any>(data.properties ?? {})) {
    const deprecated = element.deprecated !== undefined && asBoolean(element.deprecated);
    if (element.encryption !== undefined) {
      properties.set(key, { value: asString(element.val), deprecated, encryptionGroup: asString(element.encryption) });
      continue;
    }
    const type = element.type !== undefined ? asString(element.type) : 'Text';
    const typed: Record<string, () => unknown> = {
      Text: () => asString(element.val),
      Code: () => asString(element.val),
      Boolean: () => asBoolean(element.val),
      Integer: () => asInteger(element.val),
      Long: () => BigInt(asString(element.val)),
      Double: () => Number(asString(element.val)),
      Float: () => Number(asString(element.val)),
      Map: () => {
        if (typeof element.val !== 'object' || element.val === null || Array.isArray(element.val))
          throw new Error(`${key}: not a JSON object`);
        return Object.fromEntries(Object.entries(element.val).map(([k, v]) => [k, asString(v)]));
      },
      List: () => {
        if (!Array.isArray(element.val)) throw new Error(`${key}: not a JSON array`);
        return element.val.map(asString);
      },
    };
    if (typed[type]) properties.set(key, { value: typed[type](), deprecated, encryptionGroup: null });
  }
  const files = new Map<string, string>();
  for (const [path, file] of Object.entries<any>(data.files ?? {})) files.set(path, asString(file.content));
  return { account: asString(data.account), repo: asString(data.repo), properties, files };
}

/** The client's `getEncryptionGroup(key)`. */
const encryptionGroup = (config: ClientConfiguration, key: string) =>
  config.properties.get(key)?.encryptionGroup ?? null;

const lastTrailers = () => git(gitdirOf(fixture.repos, REPO), 'log', '-1', '--format=%(trailers:only,unfold)').trim();

/** The first push, as Gson writes the client's queue (attribute values through toString, so as strings). */
const FIRST_PUSH = JSON.stringify({
  changeComment: 'Java client: first push',
  enableKeyCreation: true,
  data: [
    {
      key: 'db.port',
      vdt: 'Integer',
      readme: 'the database port',
      deprecated: 'false',
      push: 'true',
      values: [
        { context: '*;*', value: 5432, active: 'true' },
        { context: 'Production;*', active: true, value: '6543' },
      ],
    },
    { key: 'feature.on', vdt: 'Boolean', push: 'true', values: [{ context: '*;*', value: true, active: 'true' }] },
    { key: 'old.name', deprecated: 'true', values: [{ context: '*;*', active: true, value: 'legacy' }] },
    { key: 'limits', vdt: 'Map', values: [{ context: '*;*', active: true, value: { max: '10', min: '1' } }] },
    { key: 'hosts', vdt: 'List', values: [{ context: '*;*', active: true, value: ['db1', 'db2'] }] },
    {
      key: 'db.password',
      securityGroup: 'secrets',
      password: PASSWORD,
      values: [{ context: '*;*', active: true, value: SECRET }],
    },
  ],
});

let firstCommit: string;
let secondCommit: string;

beforeAll(async () => {
  createOpenRepository(fixture.repos, REPO);
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'java').trim();
  const group = await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', REPO, GROUP);
  expect(group.code, group.stderr).toBe(0);
  port = Number(new URL(fixture.server.url).port);
});

describe('pushes of the ConfigHub Java client', () => {
  it('lands with Client-Version v1.3.0 on the path form; the ETag of the 200 is the new commit; the trailer records v1.3.0', async () => {
    const answer = await javaPush(FIRST_PUSH);
    expect(answer.status, answer.body.toString()).toBe(200);
    firstCommit = headOf(fixture.repos, REPO);
    expect(answer.headers.get('etag')).toBe(`"${firstCommit}"`);
    expect(answer.headers.get('content-length')).toBe('0');
    expect(git(gitdirOf(fixture.repos, REPO), 'log', '-1', '--format=%s', firstCommit).trim()).toBe(
      'Java client: first push',
    );
    expect(lastTrailers()).toBe('Application-Name: JavaApp\nClient-Version: v1.3.0');
    // Map and List values are stored as their JSON text; the secret only sealed, in the group's stored spelling.
    const show = (path: string) => git(gitdirOf(fixture.repos, REPO), 'show', `refs/heads/main:${path}`);
    const tree = git(gitdirOf(fixture.repos, REPO), 'ls-tree', '-r', '--name-only', 'refs/heads/main');
    const docOf = (key: string) => show(tree.split('\n').find((path) => path.endsWith(`/${key}.yaml`))!);
    expect(YAML.parse(docOf('limits')).values).toEqual([
      { context: '*;*', value: '{"max":"10","min":"1"}', active: true },
    ]);
    expect(YAML.parse(docOf('hosts')).values).toEqual([{ context: '*;*', value: '["db1","db2"]', active: true }]);
    expect(docOf('db.password')).toMatch(/^securityGroup: Secrets$/m);
    expect(docOf('db.password')).not.toContain(SECRET);
  });

  it('lands on the token form, and a refused push answers 304 with the reason as its ETag and moves nothing', async () => {
    const before = headOf(fixture.repos, REPO);
    const refused = await javaPush(
      JSON.stringify({ data: [{ key: 'not.there', values: [{ context: '*;*', active: true, value: 'x' }] }] }),
      'token',
    );
    expect(refused.status).toBe(304);
    expect(refused.headers.get('etag')).toMatch(/^"data\[0\] key not\.there: [^"]+"$/);
    const wrongPassword = await javaPush(
      JSON.stringify({
        data: [
          {
            key: 'db.password',
            securityGroup: 'secrets',
            password: 'not-the-password',
            values: [{ context: '*;*', active: true, value: 'x' }],
          },
        ],
      }),
      'token',
    );
    expect(wrongPassword.status).toBe(304);
    expect(wrongPassword.headers.get('etag')).toBe(
      '"data[0] key db.password: the password for security group Secrets is missing or wrong"',
    );
    expect(headOf(fixture.repos, REPO)).toBe(before);

    const answer = await javaPush(
      JSON.stringify({
        changeComment: 'Java client: token form',
        enableKeyCreation: true,
        data: [
          {
            key: 'timeout',
            vdt: 'Long',
            push: 'true',
            values: [{ context: '*;*', active: true, value: '30000000000' }],
          },
        ],
      }),
      'token',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('etag')).toBe(`"${headOf(fixture.repos, REPO)}"`);
    expect(lastTrailers()).toBe('Application-Name: JavaApp\nToken: java\nClient-Version: v1.3.0');
  });

  it('is refused with 400 when non-ASCII text arrives as single bytes (é as 0xE9), naming the offset, and the head does not move', async () => {
    const before = headOf(fixture.repos, REPO);
    const json = JSON.stringify({
      enableKeyCreation: true,
      data: [{ key: 'greeting', values: [{ context: '*;*', active: true, value: 'café' }] }],
    });
    const body = writeBytes(json);
    const answer = await javaPush(json);
    expect(answer.status).toBe(400);
    expect(answer.headers.has('etag')).toBe(false); // what the client shows: "400 null"
    const error = JSON.parse(answer.body.toString('utf8'));
    expect(error.error).toBe('bad_request');
    expect(error.message).toContain(`not valid UTF-8: byte 0xE9 at offset ${body.indexOf(0xe9)}`);
    expect(headOf(fixture.repos, REPO)).toBe(before);
    // The README's advice: the application writes é as the text \u00e9; Gson escapes its backslash, so it lands as that text.
    const escaped = await javaPush(
      JSON.stringify({
        enableKeyCreation: true,
        data: [{ key: 'greeting', values: [{ context: '*;*', active: true, value: 'caf\\u00e9' }] }],
      }),
    );
    expect(escaped.status).toBe(200);
  });
});

describe('pulls of the ConfigHub Java client', () => {
  beforeAll(async () => {
    // Files, which the Java client never pushes: a template and a secured one, pushed by another client.
    const files = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
      changeComment: 'files',
      data: [
        { file: 'conf/app.properties', context: '*;*', content: 'port=${ db.port }\nhosts=${ hosts }\n' },
        {
          file: 'conf/secret.txt',
          context: '*;*',
          securityGroup: GROUP,
          password: PASSWORD,
          content: `${FILE_SECRET}\n`,
        },
      ],
    });
    expect(files.status, files.etag ?? '').toBe(200);
    cliOk(fixture.repos, 'tag', 'create', REPO, 'release-1');
    firstCommit = headOf(fixture.repos, REPO);
    await nextSecondAfter(commitTime(gitdirOf(fixture.repos, REPO), firstCommit));
    const later = await javaPush(
      JSON.stringify({
        changeComment: 'later',
        data: [{ key: 'db.port', values: [{ context: 'Production;*', active: 'true', value: 7000 }] }],
      }),
    );
    expect(later.status).toBe(200);
    secondCommit = headOf(fixture.repos, REPO);
  });

  it('reads the properties and files, with the context echoed exactly as sent and the secured value named by its group', async () => {
    for (const context of ['Production;Billing', 'production;BILLING']) {
      const answer = await javaPull({ context, applicationName: 'JavaApp' });
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('etag')).toMatch(/^"[^"]+"$/);
      const config = readAsJavaClient(answer, context);
      expect(config.account).toBe('Acme');
      expect(config.repo).toBe('JavaApp');
      expect(config.properties.get('db.port')).toEqual({ value: 7000, deprecated: false, encryptionGroup: null });
      expect(config.properties.get('feature.on')).toEqual({ value: true, deprecated: false, encryptionGroup: null });
      expect(config.properties.get('old.name')).toEqual({ value: 'legacy', deprecated: true, encryptionGroup: null });
      expect(config.properties.get('limits')?.value).toEqual({ max: '10', min: '1' });
      expect(config.properties.get('hosts')?.value).toEqual(['db1', 'db2']);
      expect(config.properties.get('timeout')?.value).toBe(30000000000n);
      expect(config.properties.get('greeting')?.value).toBe('caf\\u00e9'); // the escape text, for the application to unescape
      expect(encryptionGroup(config, 'db.password')).toBe(GROUP);
      expect(config.properties.get('db.password')?.value).toMatch(/^enc:v1:/);
      expect(config.files.get('conf/app.properties')).toBe('port=7000\nhosts=["db1","db2"]\n');
      expect(config.files.get('conf/secret.txt')).not.toContain(FILE_SECRET);
      // The raw marks: ConfigHub's `encryption` is the group's name, on values and files alike; `cipher` stays.
      const raw = JSON.parse(answer.body.toString('utf8'));
      expect(raw.properties['db.password']).toMatchObject({ encryption: GROUP, cipher: 'AES-256-GCM' });
      expect(raw.files['conf/secret.txt']).toMatchObject({ encryption: GROUP, cipher: 'AES-256-GCM' });
      expect(raw.properties['db.port']).toEqual({ type: 'Integer', val: '7000' });
      expect(answer.body.toString('utf8')).not.toContain(SECRET);
    }
  });

  it('opens the group with Security-Profile-Auth on the token form, and a wrong password leaves the value named by its group', async () => {
    const opened = readAsJavaClient(
      await javaPull({ context: 'Production;Billing', groups: { secrets: PASSWORD }, form: 'token' }),
      'Production;Billing',
    );
    expect(opened.properties.get('db.password')).toEqual({ value: SECRET, deprecated: false, encryptionGroup: null });
    expect(opened.files.get('conf/secret.txt')).toBe(`${FILE_SECRET}\n`);

    const wrong = await javaPull({
      context: 'Production;Billing',
      groups: { secrets: 'wrong-password-9' },
      form: 'token',
    });
    const locked = readAsJavaClient(wrong, 'Production;Billing');
    expect(encryptionGroup(locked, 'db.password')).toBe(GROUP);
    expect(wrong.body.toString('utf8')).not.toContain(SECRET);
    expect(wrong.body.toString('utf8')).not.toContain(FILE_SECRET);
  });

  it('reads the past with Tag and with Repository-Date', async () => {
    const atTag = readAsJavaClient(
      await javaPull({ context: 'Production;Billing', tag: 'release-1' }),
      'Production;Billing',
    );
    expect(atTag.properties.get('db.port')?.value).toBe(6543);
    const date = isoOf(commitTime(gitdirOf(fixture.repos, REPO), firstCommit));
    const atDate = await javaPull({ context: 'Production;Billing', date });
    expect(readAsJavaClient(atDate, 'Production;Billing').properties.get('db.port')?.value).toBe(6543);
    expect(JSON.parse(atDate.body.toString('utf8')).repoDate).toBe(date);
    expect(
      readAsJavaClient(await javaPull({ context: 'Production;Billing' }), 'Production;Billing').properties.get(
        'db.port',
      )?.value,
    ).toBe(7000);
    expect(headOf(fixture.repos, REPO)).toBe(secondCommit);
  });

  it('gives comments and value contexts with Include-Comments and Include-Value-Context, and neither when they are false', async () => {
    const answer = await javaPull({ context: 'Production;Billing', includeComments: true, includeContext: true });
    readAsJavaClient(answer, 'Production;Billing');
    const raw = JSON.parse(answer.body.toString('utf8'));
    expect(raw.properties['db.port']).toEqual({
      type: 'Integer',
      comment: 'the database port',
      val: '7000',
      context: ['Production', '*'],
    });
    expect(raw.properties['old.name']).toEqual({ deprecated: true, val: 'legacy', context: ['*', '*'] });
    const plain = JSON.parse((await javaPull({ context: 'Production;Billing' })).body.toString('utf8'));
    expect(plain.properties['db.port']).toEqual({ type: 'Integer', val: '7000' });
  });
});
