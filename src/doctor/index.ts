export { runDoctor, doctorExitCode, ALL_CHECKS, type DoctorOptions } from './runner.js';
export { formatReport } from './format.js';
export type { Check, CheckOutcome, CheckResult, CheckStatus, DoctorReport, DoctorContext } from './types.js';
