// Strict validation of Kubernetes (and KEDA) objects, as an API server with
// `kubectl apply --validate=strict` would do it, without a cluster:
//
//   - the JSON-schema validators kubernetes-models and @kubernetes-models/keda
//     ship (types, required fields, enums), which ignore fields they do not
//     know, so a misspelt `livenesProbe` passed them silently;
//   - a field check derived from the same packages' type declarations
//     (generated from the Kubernetes OpenAPI document and KEDA's CRDs): every
//     key of every object must be a field of its type, or the type must be a
//     map (labels, annotations, ConfigMap data, resource quantities).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';

type Obj = Record<string, unknown>;
type Validatable = new (data: Obj) => { validate(): void };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The kinds vouch deploys: apiVersion, kind, the validating model, where its type is declared. */
const KINDS: { apiVersion: string; kind: string; model: unknown; types: string }[] = [
  ...['Namespace', 'ConfigMap', 'Secret', 'Service', 'PersistentVolumeClaim', 'Pod'].map((kind) => ({ apiVersion: 'v1', kind, model: (core as Record<string, unknown>)[kind], types: `kubernetes-models/v1/${kind}` })),
  ...['Deployment', 'StatefulSet'].map((kind) => ({ apiVersion: 'apps/v1', kind, model: (apps as Record<string, unknown>)[kind], types: `kubernetes-models/apps/v1/${kind}` })),
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', model: policy.PodDisruptionBudget, types: 'kubernetes-models/policy/v1/PodDisruptionBudget' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', model: networking.NetworkPolicy, types: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy' },
  ...['ScaledObject', 'TriggerAuthentication'].map((kind) => ({ apiVersion: 'keda.sh/v1alpha1', kind, model: (keda as Record<string, unknown>)[kind], types: `@kubernetes-models/keda/keda.sh/v1alpha1/${kind}` })),
];
const keyOf = (apiVersion: unknown, kind: unknown) => `${String(apiVersion)} ${String(kind)}`;

/** The declared type of each kind, read once with the TypeScript compiler from the packages' .d.ts files. */
function loadDeclaredTypes(): { checker: ts.TypeChecker; types: Map<string, ts.Type> } {
  // A module that exists only in memory, inside the repository so that node_modules resolves.
  const file = join(root, 'deploy/test/__kubernetes_kinds__.ts');
  const source = [
    ...KINDS.map((k, i) => `import type { I${k.kind} as K${i} } from '${k.types}';`),
    `export interface Kinds { ${KINDS.map((k, i) => `${JSON.stringify(keyOf(k.apiVersion, k.kind))}: K${i};`).join(' ')} }`,
  ].join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest));
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  if (errors.length) throw new Error(`the Kubernetes type declarations did not load: ${errors.join('; ')}`);
  const checker = program.getTypeChecker();
  const kinds = program.getSourceFile(file)?.statements.find(ts.isInterfaceDeclaration);
  if (!kinds) throw new Error('the in-memory Kinds interface is missing');
  const kindsType = checker.getTypeAtLocation(kinds);
  const types = new Map<string, ts.Type>();
  for (const k of KINDS) {
    const prop = kindsType.getProperty(keyOf(k.apiVersion, k.kind));
    if (!prop) throw new Error(`no declared type for ${keyOf(k.apiVersion, k.kind)}`);
    types.set(keyOf(k.apiVersion, k.kind), checker.getTypeOfSymbol(prop));
  }
  return { checker, types };
}

let declared: ReturnType<typeof loadDeclaredTypes> | undefined;

/** Keys of `value` (recursively) that its declared type has no field for, as paths. */
function unknownFields(checker: ts.TypeChecker, value: unknown, type: ts.Type, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const t = checker.getNonNullableType(type);
  if (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  const members = t.isUnion() ? t.types : [t];
  if (Array.isArray(value)) {
    const element = members.map((m) => m.getNumberIndexType()).find((x) => x !== undefined);
    if (element) value.forEach((v, i) => unknownFields(checker, v, element, `${path}[${i}]`, out));
    return;
  }
  if (typeof value !== 'object') return;
  const objects = members.filter((m) => (m.flags & ts.TypeFlags.Object) !== 0);
  if (objects.length === 0) return; // a type mismatch, which the schema validator reports
  for (const [key, v] of Object.entries(value as Obj)) {
    const field = objects.map((m) => m.getProperty(key)).find((x) => x !== undefined);
    if (field) {
      unknownFields(checker, v, checker.getTypeOfSymbol(field), `${path}.${key}`, out);
      continue;
    }
    const map = objects.map((m) => m.getStringIndexType()).find((x) => x !== undefined);
    if (map) {
      unknownFields(checker, v, map, `${path}.${key}`, out);
      continue;
    }
    out.push(`${path}.${key}: unknown field`);
  }
}

/**
 * Everything wrong with one object: a kind vouch does not deploy, a schema
 * violation, or a field its type does not have. Empty when it is valid.
 */
export function schemaProblems(doc: Obj): string[] {
  const name = `${String(doc.kind)}/${String((doc.metadata as Obj | undefined)?.name)}`;
  const kind = KINDS.find((k) => k.apiVersion === doc.apiVersion && k.kind === doc.kind);
  if (!kind?.model) return [`${name}: no schema for ${keyOf(doc.apiVersion, doc.kind)}`];
  const problems: string[] = [];
  try {
    new (kind.model as Validatable)(doc).validate();
  } catch (err) {
    problems.push(`${name}: ${(err as Error).message}`);
  }
  declared ??= loadDeclaredTypes();
  const type = declared.types.get(keyOf(doc.apiVersion, doc.kind));
  if (type) unknownFields(declared.checker, doc, type, name, problems);
  return problems;
}
