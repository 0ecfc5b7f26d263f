/**
 * @vouch/testing: what vouch's tests share. Helpers for the real Redis and
 * Postgres (a private BullMQ prefix and Postgres schema per test file), a
 * protocol-faithful Ollama test server, a fake `nvidia-smi` over the real H200
 * captures, and image fixtures.
 */
export { TEST_DATABASE_URL, TEST_REDIS_URL, testPostgresUrlAt, uniqueName, useTestPrefix, useTestSchema } from './test-env.js';
export type { TestPrefix, TestSchema } from './test-env.js';

export { CPU_TOKENS_PER_SECOND, GPU_TOKENS_PER_SECOND, startOllamaTestServer } from './ollama-test-server.js';
export type { OllamaTestServer, OllamaTestServerOptions } from './ollama-test-server.js';
export { DEFAULT_OLLAMA_REPLY, splitIntoChunks } from './ollama-reply.js';
export type {
  OllamaGenerationCall,
  OllamaMetrics,
  OllamaReply,
  OllamaReplyScript,
  OllamaReplySource,
  OllamaRequestMessage,
  OllamaScriptedToolCall,
  RecordedRequest,
} from './ollama-reply.js';
export { MALFORMED_BODY, MALFORMED_CONTENT, OLLAMA_FAILURE_MODES, OLLAMA_RUNNER_ERROR, startOllamaFailureRig } from './ollama-failures.js';
export type { OllamaFailureMode, OllamaFailureRig } from './ollama-failures.js';
export { DEFAULT_OLLAMA_TEST_MODELS, canonicalModelName } from './ollama-test-models.js';
export type { OllamaCapability, OllamaModelDetails, OllamaTestModel } from './ollama-test-models.js';

export {
  CONSTRUCTED_GPUS,
  CONSTRUCTED_GPU_VARIANTS,
  FAKE_NVIDIA_SMI_VARIANTS,
  NVIDIA_SMI_DRIVER_FAILURE,
  OLLAMA_RUNNER_PID,
  OTHER_GPU_UUID,
  SECOND_H200_UUID,
  SLOW_NVIDIA_SMI_DELAY_MS,
  V100_UUID,
  fakeGpus,
  fakeNvidiaSmiScript,
  installFakeNvidiaSmi,
  ollamaComputeApp,
} from './fake-nvidia-smi.js';
export type { ConstructedGpuVariant, FakeComputeApp, FakeGpu, FakeMigMode, FakeNvidiaSmi, FakeNvidiaSmiVariant } from './fake-nvidia-smi.js';
export {
  H200_CAPTURED_COMMANDS,
  H200_COMPUTE_CAP,
  H200_CUDA_VERSION,
  H200_DRIVER_VERSION,
  H200_MEMORY_TOTAL_MIB,
  H200_NAME,
  H200_PCI_BUS_ID,
  H200_UUID,
  h200CaptureDir,
  readH200Capture,
} from './h200-capture.js';
export type { CudaVisibleDevicesObservation, H200Capture } from './h200-capture.js';
export { fixturesDir, repoRoot } from './repo-paths.js';
export { scriptedExtractionModel } from './extraction-model.js';

export { NOT_AN_IMAGE, makeJpeg, makePng, makeWebp } from './images.js';
export type { ImageColor, ImageSpec } from './images.js';

export { TsProcesses, eventually, spawnTsProcess } from './child-process.js';
export { INSPECT_ARGS, collectGarbage, inspectorUrl } from './inspector.js';
export { JobFailed, QueueJobs } from './queue-jobs.js';
export { testActor } from './actors.js';
export { startServiceUnderTest } from './service-under-test.js';
export type { ServiceUnderTest, ServiceUnderTestOptions } from './service-under-test.js';
export { metricValue } from './metrics.js';
export type { MetricsSource } from './metrics.js';
export type { TsProcess } from './child-process.js';

export { closedPort, startSilentServer, startTcpProxy } from './tcp-faults.js';
export { startPgBouncer } from './pgbouncer.js';
export type { PgBouncer, PgBouncerOptions } from './pgbouncer.js';
export type { SilentServer, TcpProxy } from './tcp-faults.js';

export { OMIT, inputAsReceived, inputFields, percentEncode, requestFor, sampleValue, sendRequest, unwrapSchema, withField } from './operation-walk.js';
export type { FieldKind, FieldLocation, FieldPath, InputField, OperationRequest, RawAnswer } from './operation-walk.js';
export { TASK_DOMAINS } from './task-domains.js';
export type { TaskDomain } from './task-domains.js';
