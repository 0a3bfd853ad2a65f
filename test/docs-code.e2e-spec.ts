/**
 * Docs that run: every TypeScript block of README.md, libs/sdk/README.md and docs/*.md is compiled,
 * strict, against the code as it is now (the SDK under its published name); a block marked
 * `<!-- excerpt: path -->` must be found verbatim in that file, so what is shown (the event types, the
 * webhook receiver) is what is compiled and tested. And the docs point at nothing outside the repository.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = process.cwd();
const DOCS = [
  'README.md',
  'libs/sdk/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const ALL_MARKDOWN = [...DOCS, 'apps/cpaas-sim/README.md', ...readdirSync(join(ROOT, 'libs')).map((lib) => `libs/${lib}/README.md`)].filter(
  (file, index, list) => list.indexOf(file) === index && ts.sys.fileExists(join(ROOT, file)),
);

/** Names the SDK README's fragments use without declaring them, as a reader's code around them would. */
const AMBIENT = `
declare const broker: import('@session-broker/sdk').BrokerClient;
declare const input: import('@session-broker/sdk').CreateSessionInput;
declare const id: string;
declare const rideId: string;
`;

interface Block {
  file: string;
  /** 1-based line of the first line of code. */
  line: number;
  lang: string;
  code: string;
  excerptOf?: string;
}

function blocksOf(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end === -1) throw new Error(`${file}:${i + 1}: unclosed code block`);
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const excerptOf = /^<!-- excerpt: (\S+) -->$/.exec(lines[before] ?? '')?.[1];
    blocks.push({ file, line: i + 2, lang: open[1], code: lines.slice(i + 1, end).join('\n'), excerptOf });
    i = end;
  }
  return blocks;
}

const isTypeScript = (block: Block): boolean => block.lang === 'ts' || block.lang === 'typescript';

/** The anchors of a markdown file's headings, as GitHub makes them (fenced blocks skipped, repeats numbered). */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The TypeScript of apps, libs, bench and test, with its lines (vendor fixtures left out). */
function codeLines(): Array<{ file: string; line: number; text: string }> {
  return ['apps', 'libs', 'bench', 'test'].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !/(^|\/)(node_modules|dist|fixtures)\//.test(f))
      .flatMap((f) => {
        const file = `${dir}/${f}`;
        return readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .map((text, i) => ({ file, line: i + 1, text }));
      }),
  );
}

describe('the docs', () => {
  const blocks = DOCS.flatMap(blocksOf);

  it('have TypeScript blocks in the SDK README and the webhook guide', () => {
    const files = new Set(blocks.filter(isTypeScript).map((b) => b.file));
    expect([...files]).toEqual(expect.arrayContaining(['libs/sdk/README.md', 'docs/webhooks.md', 'README.md']));
  });

  it('show excerpts that are verbatim in the file they name', () => {
    const excerpts = blocks.filter((b) => b.excerptOf);
    expect(excerpts.length).toBeGreaterThan(0);
    const stale = excerpts.filter((b) => !readFileSync(join(ROOT, b.excerptOf!), 'utf8').includes(b.code));
    expect(stale.map((b) => `${b.file}:${b.line} is no longer in ${b.excerptOf}`)).toEqual([]);
  });

  it('compile: every TypeScript block, strict, against the current code', () => {
    const checked = blocks.filter((b) => isTypeScript(b) && !b.excerptOf);
    const virtual = new Map<string, string>();
    const origin = new Map<string, Block>();
    for (const block of checked) {
      const name = join(ROOT, dirname(block.file), `${block.file.replace(/\W/g, '_')}_${block.line}.docs.ts`);
      virtual.set(name, `${block.code}\nexport {};\n`);
      origin.set(name, block);
    }
    const ambient = join(ROOT, 'docs-ambient.d.ts');
    virtual.set(ambient, AMBIENT);

    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile).config, ts.sys, ROOT);
    const options: ts.CompilerOptions = {
      ...config.options,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      noEmit: true,
      incremental: false,
      types: ['node'],
      noUnusedLocals: false,
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, language, ...rest) =>
      virtual.has(name) ? ts.createSourceFile(name, virtual.get(name)!, language) : getSourceFile(name, language, ...rest);
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => virtual.has(name) || fileExists(name);
    const readFile = host.readFile.bind(host);
    host.readFile = (name) => virtual.get(name) ?? readFile(name);

    const program = ts.createProgram([...virtual.keys()], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && virtual.has(d.file.fileName))
      .map((d) => {
        const block = origin.get(d.file!.fileName);
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        const where = block ? `${block.file}:${block.line + line}` : relative(ROOT, d.file!.fileName);
        return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
    expect(checked.length).toBeGreaterThan(10);
  }, 120_000);

  it('point at nothing that is not in the repository (no SPEC sections, no reference/*.txt)', () => {
    const found = ALL_MARKDOWN.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((text, i) => (/SPEC §|reference\/[\w-]+\.txt|[\w-]+\.txt\b/.test(text) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

describe('the code', () => {
  const lines = codeLines();

  it('points at docs sections that exist (docs/<file>.md#<heading>)', () => {
    const anchors = new Map<string, Set<string>>();
    const cited = lines.flatMap(({ file, line, text }) =>
      [...text.matchAll(/docs\/([\w.-]+\.md)#([\w-]+)/g)].map((m) => ({ where: `${file}:${line}`, doc: `docs/${m[1]}`, anchor: m[2] })),
    );
    const broken = cited.filter(({ doc, anchor }) => {
      if (!ts.sys.fileExists(join(ROOT, doc))) return true;
      if (!anchors.has(doc)) anchors.set(doc, anchorsOf(doc));
      return !anchors.get(doc)!.has(anchor);
    });
    expect(broken.map(({ where, doc, anchor }) => `${where}: ${doc} has no heading #${anchor}`)).toEqual([]);
    expect(cited.length).toBeGreaterThan(10);
  });

  it('cites no SPEC sections and no reference files that are not in the repository (docs/design.md says it in words)', () => {
    const found = lines
      .filter(({ file }) => file !== 'test/docs-code.e2e-spec.ts')
      .filter(({ text }) =>
        /SPEC §|reference\/[\w-]+\.txt|(telephony-failover|provider-failover|callback-breaker|webhook-delivery)\.txt/.test(text),
      )
      .map(({ file, line, text }) => `${file}:${line}: ${text.trim()}`);
    expect(found).toEqual([]);
  });
});
