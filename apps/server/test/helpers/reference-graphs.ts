/** Secret graphs whose paths outnumber their secrets, for expansion and tree tests and benches. */

/** L10 = "v"; for i = 9…0, Li is "${L(i+1)}" repeated k times: L0 expands to k^10 characters. */
export const repeatedChain = (k: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`L${i}`, i === 10 ? "v" : `\${L${i + 1}}`.repeat(k)]));

/** Ten layers of `width` secrets, each referencing every secret of the layer below, over one BOTTOM secret. */
export const denseLayers = (width: number): Record<string, string> => {
  const out: Record<string, string> = { BOTTOM: "b" };
  for (let layer = 0; layer < 10; layer += 1)
    for (let j = 0; j < width; j += 1)
      out[`N${layer}_${j}`] =
        layer === 0 ? "${BOTTOM}" : Array.from({ length: width }, (_, i) => `\${N${layer - 1}_${i}}`).join("-");
  return out;
};

/** C0 … C(n-1), each referencing the next; the last is "end". */
export const referenceLine = (n: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`C${i}`, i === n - 1 ? "end" : `\${C${i + 1}}`]));
