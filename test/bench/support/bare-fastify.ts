// The yardstick of the daemon-throughput suite: the same fastify the daemon runs, one POST /hook route that
// parses the JSON body (fastify's default parser) and answers `{}`, on a Unix socket (the daemon's default
// transport), in its own process like the daemon. Prints `ready` once listening; SIGTERM stops it.
//   node dist/test/bench/support/bare-fastify.js <socket path>
import Fastify from 'fastify';

const socketPath = process.argv[2];
if (!socketPath) throw new Error('usage: bare-fastify.js <socket path>');
const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
app.post('/hook', async () => ({}));
await app.listen({ path: socketPath });
process.stdout.write('ready\n');
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
