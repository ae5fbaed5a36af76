// The bare node:http reference of the pull scenario: a process that answers every
// request with the bytes of the file named by its argument, with the headers a JSON answer needs
// and nothing else. Prints its port on stdout once listening; stopped by its pid.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const body = readFileSync(process.argv[2]);
const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length };
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, headers).end(body);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
