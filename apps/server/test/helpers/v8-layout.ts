import { setFlagsFromString } from "node:v8";

// Lets V8 compile its `%` intrinsics in functions created from here on; it changes nothing else.
setFlagsFromString("--allow-natives-syntax");

/**
 * V8's own view of an object's layout: false when it keeps the object's properties in a dictionary
 * (slow mode). Tests use it to guard objects a hot path creates per request.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the intrinsic has no other spelling
export const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean;
