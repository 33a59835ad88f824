import { AppError } from "../contracts/errors";
// A pure leaf shared with the workers: an expression accepted here is compiled by exactly the code that runs it.
import { compileTransform } from "../rules/transform";

/** A transform expression given to a connection or collection: a bad one is a 400 naming the body field, with JSONata's message and position; null is none. */
export function checkTransformInput(expression: string | null) {
  if (expression === null) return;
  try {
    compileTransform(expression);
  } catch (e) {
    if (e instanceof AppError && Array.isArray(e.details)) {
      throw new AppError(e.code, e.message, (e.details as { field: string }[]).map((d) => ({ ...d, field: `body.${d.field}` })));
    }
    throw e;
  }
}
