// The alert rules checked and unit-tested by Prometheus's own tool: `promtool
// check rules` on deploy/prometheus/alerts.yml, and `promtool test rules` on
// alerts.test.yml, where each alert fires on series shaped like the services'
// with the labels and words on-call sees, and stays quiet where it must. Every
// alert needs a case that fires, and a rule with a mistake planted (a
// threshold moved) must fail its test.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const run = promisify(execFile);
const prometheusDir = resolve(dirname(fileURLToPath(import.meta.url)), '../prometheus');

/** Runs promtool; a missing one is an error that says how to get it. */
async function promtool(args: string[], cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd, timeout: 60_000 });
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') {
      throw new Error("promtool is not installed: it comes with Prometheus ('apt-get install prometheus' on Debian, or the promtool binary of a release from https://prometheus.io/download/); .ci/run installs it when missing", { cause: err });
    }
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

describe('the alert rules, by promtool', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'vouch-promtool-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('are valid rules', async () => {
    const checked = await promtool(['check', 'rules', 'alerts.yml'], prometheusDir);
    expect(checked.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(checked.ok, checked.output).toBe(true);
  });

  it('pass their unit tests (alerts.test.yml)', async () => {
    const tested = await promtool(['test', 'rules', 'alerts.test.yml'], prometheusDir);
    expect(tested.ok, tested.output).toBe(true);
  });

  it('each alert has a case where it fires', () => {
    const alerts = list((parse(readFileSync(join(prometheusDir, 'alerts.yml'), 'utf8')) as Obj).groups).flatMap((g) => list(g.rules).map((r) => r.alert as string));
    const firing = new Set(
      list((parse(readFileSync(join(prometheusDir, 'alerts.test.yml'), 'utf8')) as Obj).tests)
        .flatMap((t) => list(t.alert_rule_test))
        .filter((c) => list(c.exp_alerts).length > 0)
        .map((c) => c.alertname as string),
    );
    expect(alerts.length).toBeGreaterThan(0);
    expect(alerts.filter((a) => !firing.has(a))).toEqual([]);
  });

  it('fail their unit tests when a threshold is moved', async () => {
    const rules = readFileSync(join(prometheusDir, 'alerts.yml'), 'utf8');
    // More than 10 % of jobs failing becomes more than 30 %: the 25 % case must no longer fire.
    const planted = rules.replace(/(sum by \(queue\) \(rate\(vouch_jobs_processed_total\[10m\]\)\)\s*>\s*)0\.1\b/, '$10.3');
    expect(planted).not.toBe(rules);
    writeFileSync(join(scratch, 'alerts.yml'), planted);
    copyFileSync(join(prometheusDir, 'alerts.test.yml'), join(scratch, 'alerts.test.yml'));
    const tested = await promtool(['test', 'rules', 'alerts.test.yml'], scratch);
    expect(tested.ok).toBe(false);
    expect(tested.output).toContain('alertname: VouchJobFailureRatioHigh');
  });
});
