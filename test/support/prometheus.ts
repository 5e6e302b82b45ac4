/** One sample of a Prometheus text exposition. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
  /** Value of the one sample with this name whose labels include `labels`; undefined when there is none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\["\\\\n])*"`;
// Go's ParseFloat, which Prometheus reads values with, takes NaN and Inf in any case (prom-client writes `Nan`).
const VALUE = '(?:[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-][Ii]nf|[Nn]a[Nn])';
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (${VALUE})(?: -?\\d+)?$`);
const HELP_LINE = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"/g;

/** The family a sample belongs to: histogram and summary samples carry suffixes. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count|total|created)$/, '');
  return types.has(base) ? base : undefined;
}

/**
 * Parses the Prometheus text format (version 0.0.4) strictly: every line is a HELP, a TYPE or a sample of
 * a family declared before it, and the text ends with a newline; anything else throws, naming the line.
 */
export function parseExposition(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const lines = text.slice(0, -1).split('\n');
  for (const [i, line] of lines.entries()) {
    if (line === '' || HELP_LINE.test(line)) continue;
    const type = TYPE_LINE.exec(line);
    if (type) {
      if (types.has(type[1])) throw new Error(`line ${i + 1}: a second TYPE for ${type[1]}`);
      types.set(type[1], type[2]);
      continue;
    }
    const m = SAMPLE_LINE.exec(line);
    if (!m) throw new Error(`line ${i + 1} is not in the Prometheus text format: ${line}`);
    if (!familyOf(m[1], types)) throw new Error(`line ${i + 1}: sample of ${m[1]} before its TYPE`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL_PAIR)) labels[k] = v.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    samples.push({ name: m[1], labels, value: /nan/i.test(m[3]) ? NaN : Number(m[3].replace(/inf/i, 'Infinity')) });
  }
  return {
    samples,
    types,
    value(name, wanted = {}) {
      const found = samples.filter((s) => s.name === name && Object.entries(wanted).every(([k, v]) => s.labels[k] === v));
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(wanted)}`);
      return found[0]?.value;
    },
  };
}
