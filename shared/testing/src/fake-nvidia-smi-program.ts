/**
 * Source of the fake `nvidia-smi` executable, run by Node in a child process.
 * It is JavaScript text rather than a TypeScript function so that it runs the
 * same whatever transformed this package (vitest, tsc, coverage
 * instrumentation): `toString()` of a transpiled function would not.
 *
 * The installer prepends `const MODEL = {...};` (see FakeNvidiaSmiModel in
 * fake-nvidia-smi.ts). The processes `--query-compute-apps` lists are read at
 * every call from compute-apps.json beside the script (tests change them
 * between calls), else MODEL.apps. Exit codes follow nvidia-smi's documented
 * ones: 2 bad argument, 6 query unsuccessful, 9 driver not loaded.
 */
export const FAKE_NVIDIA_SMI_PROGRAM = String.raw`
'use strict';
const argv = process.argv.slice(2);

function finish(stdout, code, stderr) {
  if (stderr) process.stderr.write(stderr);
  process.stdout.write(stdout);
  process.exitCode = code;
}

function invalidArguments(detail) {
  finish("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", 2,
    'fake nvidia-smi (vouch tests): ' + detail + '\n');
}

function computeApps() {
  const fs = require('fs');
  const path = require('path');
  try {
    return JSON.parse(fs.readFileSync(path.join(path.dirname(process.argv[1]), 'compute-apps.json'), 'utf8'));
  } catch (err) {
    if (err && err.code === 'ENOENT') return MODEL.apps;
    throw err;
  }
}

function main() {
  if (MODEL.failing) return finish(MODEL.failing + '\n', 9);

  const apps = computeApps();
  const asksApps = argv.some((a) => a.startsWith('--query-compute-apps'));
  // The compute-apps capture was taken on an idle node: it holds only while no process runs.
  const exact = MODEL.exact[argv.join('\u0000')];
  if (exact !== undefined && !(asksApps && apps.length > 0)) return finish(exact, 0);

  const opts = { list: false, query: false, xml: false, version: false, gpuFields: null, appFields: null, format: null, ids: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (name) => (a === name ? argv[++i] : a.slice(name.length + 1));
    if (a === '-L' || a === '--list-gpus') opts.list = true;
    else if (a === '-q' || a === '--query') opts.query = true;
    else if (a === '-x' || a === '--xml-format') opts.xml = true;
    else if (a === '-qx' || a === '-xq') { opts.query = true; opts.xml = true; }
    else if (a === '--version') opts.version = true;
    else if (a === '--query-gpu' || a.startsWith('--query-gpu=')) opts.gpuFields = value('--query-gpu');
    else if (a === '--query-compute-apps' || a.startsWith('--query-compute-apps=')) opts.appFields = value('--query-compute-apps');
    else if (a === '--format' || a.startsWith('--format=')) opts.format = value('--format');
    else if (a === '-i') opts.ids = argv[++i];
    else if (a === '--id' || a.startsWith('--id=')) opts.ids = value('--id');
    else if (/^-i\S/.test(a)) opts.ids = a.slice(2);
    else return invalidArguments('unknown argument ' + JSON.stringify(a));
  }

  let gpus = MODEL.gpus;
  if (opts.ids !== null) {
    if (opts.ids === undefined || opts.ids === '') return invalidArguments('-i needs a value');
    const wanted = opts.ids.split(',');
    gpus = gpus.filter((g) => wanted.some((id) => id === String(g.index) || id === g.uuid || id.toLowerCase() === g.pciBusId.toLowerCase()));
    if (gpus.length === 0) return finish('No devices were found\n', 6);
  }

  if (opts.version) {
    const nvml = MODEL.driverVersion.split('.').slice(0, 2).join('.');
    return finish('NVIDIA-SMI version  : ' + MODEL.driverVersion + '\nNVML version        : ' + nvml +
      '\nDRIVER version      : ' + MODEL.driverVersion + '\nCUDA Version        : ' + MODEL.cudaVersion + '\n', 0);
  }
  if (opts.list && !opts.query && opts.gpuFields === null && opts.appFields === null) {
    return finish(gpus.map((g) => 'GPU ' + g.index + ': ' + g.name + ' (UUID: ' + g.uuid + ')\n').join(''), 0);
  }
  if (opts.query && opts.xml && opts.gpuFields === null && opts.appFields === null) {
    if (gpus.length !== MODEL.gpus.length) return invalidArguments('-q -x with -i is not captured');
    return finish(MODEL.xml, 0);
  }
  if ((opts.gpuFields === null) === (opts.appFields === null) || opts.list || opts.query) {
    return invalidArguments('no capture for ' + JSON.stringify(argv.join(' ')) + '; use -L, -q -x, --query-gpu=... or --query-compute-apps=...');
  }

  if (!opts.format) return invalidArguments('--format=csv is required with a --query-* option');
  const format = opts.format.split(',');
  if (!format.includes('csv') || format.some((f) => !['csv', 'noheader', 'nounits'].includes(f))) {
    return invalidArguments('unsupported --format ' + JSON.stringify(opts.format));
  }
  const noheader = format.includes('noheader');
  const nounits = format.includes('nounits');

  const mib = (n) => ({ unit: 'MiB', value: String(n) });
  const gpuColumns = {
    index: (g) => String(g.index),
    count: () => String(gpus.length),
    uuid: (g) => g.uuid,
    gpu_uuid: (g) => g.uuid,
    name: (g) => g.name,
    gpu_name: (g) => g.name,
    serial: (g) => g.serial,
    compute_cap: (g) => g.computeCap,
    'memory.total': (g) => mib(g.memoryTotalMiB),
    'memory.reserved': (g) => mib(g.memoryReservedMiB),
    'memory.used': (g) => mib(g.memoryUsedMiB),
    'memory.free': (g) => mib(g.memoryFreeMiB),
    driver_version: () => MODEL.driverVersion,
    'pci.bus_id': (g) => g.pciBusId,
    gpu_bus_id: (g) => g.pciBusId,
    'mig.mode.current': (g) => g.migMode,
    'mig.mode.pending': (g) => g.migPending,
    persistence_mode: () => 'Enabled',
    'utilization.gpu': () => ({ unit: '%', value: '0' }),
    'temperature.gpu': () => '34',
  };
  // Header names as nvidia-smi prints them: used_memory is an alias of used_gpu_memory.
  const appHeaders = { used_memory: 'used_gpu_memory', used_gpu_memory: 'used_gpu_memory' };
  const gpuOf = (a) => MODEL.gpus.find((g) => g.uuid === a.gpuUuid);
  const appColumns = {
    pid: (a) => String(a.pid),
    process_name: (a) => a.processName,
    gpu_uuid: (a) => a.gpuUuid,
    gpu_name: (a) => (gpuOf(a) ? gpuOf(a).name : '[N/A]'),
    gpu_bus_id: (a) => (gpuOf(a) ? gpuOf(a).pciBusId : '[N/A]'),
    gpu_serial: (a) => (gpuOf(a) ? gpuOf(a).serial : '[N/A]'),
    used_memory: (a) => (a.usedMemoryMiB === null ? '[N/A]' : mib(a.usedMemoryMiB)),
    used_gpu_memory: (a) => (a.usedMemoryMiB === null ? '[N/A]' : mib(a.usedMemoryMiB)),
  };

  const fieldList = opts.gpuFields !== null ? opts.gpuFields : opts.appFields;
  const fields = (fieldList || '').split(',').map((f) => f.trim()).filter((f) => f !== '');
  if (fields.length === 0) return invalidArguments('empty field list');
  const known = opts.gpuFields !== null ? gpuColumns : appColumns;
  for (const f of fields) {
    if (!Object.prototype.hasOwnProperty.call(known, f)) return finish('Field "' + f + '" is not a valid field to query.\n\n', 2);
  }

  let out = '';
  const cell = (c) => (typeof c === 'object' ? (nounits ? c.value : c.value + ' ' + c.unit) : c);
  if (opts.gpuFields !== null) {
    const rows = gpus.map((g) => fields.map((f) => gpuColumns[f](g)));
    if (!noheader) {
      const first = rows[0] || [];
      out += fields.map((f, i) => (first[i] && typeof first[i] === 'object' ? f + ' [' + first[i].unit + ']' : f)).join(', ') + '\n';
    }
    for (const row of rows) out += row.map(cell).join(', ') + '\n';
  } else {
    // -i narrows the listing to the processes on the selected GPUs.
    const listed = apps.filter((a) => opts.ids === null || gpus.some((g) => g.uuid === a.gpuUuid));
    if (!noheader) {
      // Unit columns carry their unit in the header whether or not a row is printed (the idle capture shows it).
      out += fields.map((f) => (f === 'used_memory' || f === 'used_gpu_memory' ? appHeaders[f] + ' [MiB]' : f)).join(', ') + '\n';
    }
    for (const a of listed) out += fields.map((f) => cell(appColumns[f](a))).join(', ') + '\n';
  }
  return finish(out, 0);
}

if (MODEL.delayMs) {
  const delay = Number(process.env.FAKE_NVIDIA_SMI_DELAY_MS || MODEL.delayMs);
  setTimeout(main, delay);
} else {
  main();
}
`;
