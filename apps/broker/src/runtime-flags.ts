/**
 * The V8 flags the broker's process runs with: the Dockerfile's command, `npm start` and the benches
 * pass them on Node's command line (V8 reads them when it sets up the heap; NODE_OPTIONS does not take
 * them). Why: docs/operations.md#runtime-flags.
 *
 * - `--min-semi-space-size=16`: the young generation keeps 16 MB per semi-space through an idle spell.
 *   Left to itself V8 shrinks it to 1 MB while the broker is quiet, and the next burst of creates then
 *   pays about 4× as many scavenges until it has grown back.
 * - `--no-memory-reducer`: no heap-shrinking collections scheduled after an idle spell; their
 *   incremental marking was finished by the first requests of the next burst, in a 30 ms pause.
 */
export const BROKER_NODE_FLAGS = ['--min-semi-space-size=16', '--no-memory-reducer'] as const;
