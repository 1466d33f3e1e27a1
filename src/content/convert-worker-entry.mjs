// Entry of the conversion worker threads. A worker does not inherit a TypeScript loader that was
// registered in code (as bin/folio does), only one given on the command line (`--import tsx`, as
// the tests run), so it registers tsx itself before loading the TypeScript module.
import { register } from 'tsx/esm/api';

register();
const { runConversion } = await import('./convert-worker.ts');

export default runConversion;
