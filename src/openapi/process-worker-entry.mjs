// Entry of the OpenAPI processing worker thread. Like the conversion workers, it registers tsx
// itself: a worker inherits a TypeScript loader given on the command line, not one registered in code.
import { register } from 'tsx/esm/api';

register();
const { processSource } = await import('./process.ts');

export default (task) => processSource(task.source, task.limits);
