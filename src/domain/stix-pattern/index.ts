import { BaseErrorListener, CharStream, CommonTokenStream, PredictionMode, type ParseTree, type RecognitionException, type Recognizer, type Token, type ATNSimulator } from 'antlr4ng';
import { STIXPatternLexer } from './generated/STIXPatternLexer.js';
import {
  type ObjectPathContext,
  ObservationExpressionRepeatedContext,
  ObservationExpressionSimpleContext,
  ObservationExpressionStartStopContext,
  ObservationExpressionWithinContext,
  type PatternContext,
  type PrimitiveLiteralContext,
  PropTestContext,
  PropTestEqualContext,
  PropTestParenContext,
  PropTestSetContext,
  STIXPatternParser,
} from './generated/STIXPatternParser.js';

/** One comparison of a pattern: `<object path> <operator> <value>`, the value as text. */
export interface Comparison {
  /** `type:property[.key...]`, quotes around keys removed: `file:hashes.SHA-256`. */
  path: string;
  operator: string;
  negated: boolean;
  values: string[];
}

/** The indicator types a single comparison reduces to. */
export type IndicatorType = 'ipv4' | 'ipv6' | 'cidr' | 'domain' | 'url' | 'email' | 'md5' | 'sha1' | 'sha256' | 'user-agent';

export type ReducedPattern =
  /** One comparison of an observable's value with one literal: the indicator it names. */
  | { kind: 'single'; type: IndicatorType; value: string; comparison: Comparison }
  /** A valid pattern that is more than one comparison (or one this cannot type): kept whole. */
  | { kind: 'compound'; comparisons: Comparison[]; observations: number; qualified: boolean }
  /** Not a STIX pattern: what the parser said, never an exception. */
  | { kind: 'invalid'; errors: string[] };

/** At most this many characters of a pattern are parsed (a bigger one is refused, not read). */
export const MAX_PATTERN_LENGTH = 64 * 1024;

const VALUE_TYPES: Record<string, IndicatorType> = {
  'ipv4-addr:value': 'ipv4',
  'ipv6-addr:value': 'ipv6',
  'domain-name:value': 'domain',
  'url:value': 'url',
  'email-addr:value': 'email',
  'file:hashes.MD5': 'md5',
  'file:hashes.SHA-1': 'sha1',
  'file:hashes.SHA1': 'sha1',
  'file:hashes.SHA-256': 'sha256',
  'file:hashes.SHA256': 'sha256',
  // The HTTP request extension's User-Agent header (STIX 2.1 section 6.12.2.1).
  'network-traffic:extensions.http-request-ext.request_header.User-Agent': 'user-agent',
};

/** Collects syntax errors instead of printing them. */
class Collect extends BaseErrorListener {
  readonly errors: string[] = [];
  override syntaxError<S extends Token, T extends ATNSimulator>(_r: Recognizer<T>, _s: S | null, line: number, column: number, message: string, _e: RecognitionException | null): void {
    if (this.errors.length < 10) this.errors.push(`${line}:${column} ${message}`);
  }
}

/**
 * One lexer and parser, made once and given each pattern in turn (a parse is synchronous, so two
 * never share them): making them per pattern cost more than the parse itself.
 */
let machine: { lexer: STIXPatternLexer; parser: STIXPatternParser; errors: Collect } | undefined;

/** The lexer, the parser and their error collector, made at the first pattern. */
function machineOf() {
  if (!machine) {
    const errors = new Collect();
    const lexer = new STIXPatternLexer(CharStream.fromString(''));
    lexer.removeErrorListeners();
    lexer.addErrorListener(errors);
    const parser = new STIXPatternParser(new CommonTokenStream(lexer));
    parser.removeErrorListeners();
    parser.addErrorListener(errors);
    // SLL prediction: what the grammar needs (no SLL conflict on a valid pattern), much faster than full LL.
    parser.interpreter.predictionMode = PredictionMode.SLL;
    machine = { lexer, parser, errors };
  }
  return machine;
}

/** A pattern's parse tree, by the parser generated from STIXPattern.g4, or its syntax errors. */
export function parsePattern(text: string): { tree: PatternContext; errors: [] } | { tree: null; errors: string[] } {
  if (text.length > MAX_PATTERN_LENGTH) return { tree: null, errors: [`longer than ${MAX_PATTERN_LENGTH} characters`] };
  const { lexer, parser, errors } = machineOf();
  errors.errors.length = 0;
  lexer.inputStream = CharStream.fromString(text);
  parser.tokenStream = new CommonTokenStream(lexer);
  const tree = parser.pattern();
  return errors.errors.length ? { tree: null, errors: [...errors.errors] } : { tree, errors: [] };
}

/** A string literal's text: quotes off, `\'` and `\\` unescaped. */
function unquote(literal: string): string {
  return literal.startsWith("'") ? literal.slice(1, -1).replace(/\\(['\\])/g, '$1') : literal;
}

function pathOf(ctx: ObjectPathContext): string {
  const steps = ctx.objectPathComponent()?.getText() ?? '';
  // Quoted keys are the same keys: hashes.'SHA-256' is hashes.SHA-256.
  return `${ctx.objectType().getText()}:${unquote(ctx.firstPathComponent().getText())}${steps.replace(/'((?:[^'\\]|\\.)*)'/g, (_m, key: string) => key.replace(/\\(['\\])/g, '$1'))}`;
}

const literalOf = (ctx: PrimitiveLiteralContext) => unquote(ctx.getText());

function comparisonOf(test: PropTestContext): Comparison | null {
  if (test instanceof PropTestEqualContext) {
    return { path: pathOf(test.objectPath()), operator: test.EQ() ? '=' : '!=', negated: Boolean(test.NOT()), values: [literalOf(test.primitiveLiteral())] };
  }
  if (test instanceof PropTestSetContext) {
    return { path: pathOf(test.objectPath()), operator: 'IN', negated: Boolean(test.NOT()), values: test.setLiteral().primitiveLiteral().map(literalOf) };
  }
  const path = (test as { objectPath?: () => ObjectPathContext }).objectPath?.();
  if (!path) return null;
  // ORDER, LIKE, MATCHES, ISSUBSET, ISSUPERSET, EXISTS: kept as their text.
  const [, operator = '', ...rest] = test.children.map((c) => c.getText());
  return { path: pathOf(path), operator: test.children[0] === path ? operator : test.children[0]!.getText(), negated: false, values: rest.map(unquote) };
}

/** Every comparison and observation of the tree, in order. */
function walk(node: ParseTree, found: { comparisons: Comparison[]; observations: number; qualified: boolean }) {
  if (node instanceof ObservationExpressionSimpleContext) found.observations++;
  if (node instanceof ObservationExpressionStartStopContext || node instanceof ObservationExpressionWithinContext || node instanceof ObservationExpressionRepeatedContext) found.qualified = true;
  if (node instanceof PropTestContext && !(node instanceof PropTestParenContext)) {
    const c = comparisonOf(node);
    if (c) found.comparisons.push(c);
    return;
  }
  for (let i = 0; i < node.getChildCount(); i++) walk(node.getChild(i)!, found);
}

/**
 * What a pattern says as an indicator: one observable compared with one value (`[ipv4-addr:value =
 * '198.51.100.7']`) is that indicator, typed (an address with a prefix length is a CIDR); anything
 * more is kept whole with its comparisons; text that is no pattern is `invalid`, never a throw.
 */
export function reducePattern(text: string): ReducedPattern {
  // A pattern of a shape already reduced to one comparison is that comparison with its own value.
  const shape = shapeOf(text);
  const known = shape && singles.get(shape.key);
  if (shape && known) {
    const value = unquote(shape.literal!);
    return { kind: 'single', type: typed(known.type, value), value, comparison: { ...known.comparison, values: [value] } };
  }
  const reduced = reduceParsed(text);
  if (shape?.literal !== undefined && reduced.kind === 'single') {
    if (singles.size >= MAX_SHAPES) singles.clear();
    singles.set(shape.key, { type: VALUE_TYPES[reduced.comparison.path]!, comparison: reduced.comparison });
  }
  return reduced;
}

/** An address with a prefix length is a CIDR. */
const typed = (type: IndicatorType, value: string): IndicatorType => ((type === 'ipv4' || type === 'ipv6') && value.includes('/') ? 'cidr' : type);

/**
 * Shapes of patterns that reduced to one comparison, by their tokens: parsing depends on the token
 * types alone, so a pattern whose tokens are another's but for the literal compared (`= '...'`) has
 * its parse. A feed's thousands of `[ipv4-addr:value = '...']` are lexed each, parsed once.
 */
const singles = new Map<string, { type: IndicatorType; comparison: Comparison }>();
const MAX_SHAPES = 1000;

/** The pattern's tokens (by the generated lexer) as a key, the literal after its one `=` left out; null when it does not lex. */
function shapeOf(text: string): { key: string; literal?: string } | null {
  if (text.length > MAX_PATTERN_LENGTH) return null;
  const { lexer, errors } = machineOf();
  errors.errors.length = 0;
  lexer.inputStream = CharStream.fromString(text);
  const tokens = lexer.getAllTokens();
  if (errors.errors.length) return null;
  let key = '';
  let literal: string | undefined;
  let compared = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === STIXPatternLexer.StringLiteral && tokens[i - 1]?.type === STIXPatternLexer.EQ) {
      compared++;
      literal = token.text ?? '';
      key += '\u0001';
    } else key += `${token.type}\u0002${token.text ?? ''}\u0000`;
  }
  return compared === 1 ? { key, literal } : { key };
}

function reduceParsed(text: string): ReducedPattern {
  const parsed = parsePattern(text);
  if (!parsed.tree) return { kind: 'invalid', errors: parsed.errors };
  const found = { comparisons: [] as Comparison[], observations: 0, qualified: false };
  walk(parsed.tree, found);
  const [only] = found.comparisons;
  if (found.comparisons.length === 1 && found.observations === 1 && !found.qualified && only && only.operator === '=' && !only.negated && only.values.length === 1) {
    const type = VALUE_TYPES[only.path];
    const value = only.values[0]!;
    if (type) return { kind: 'single', type: typed(type, value), value, comparison: only };
  }
  return { kind: 'compound', ...found };
}
