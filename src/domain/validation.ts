import { DomainError, type FieldIssue } from "./errors.ts";

// C0 control characters (U+0000–U+001F). DEL and C1 are allowed: they are not in the contract.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const C0 = /[\u0000-\u001f]/;

/** Names (`name`, `service_name`): trimmed, 1..80 code points, no C0 controls, well-formed Unicode. Returns the stored form. */
export function checkName(field: string, value: string, issues: FieldIssue[]): string {
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length === 0) issues.push({ field, message: "must not be empty after trimming" });
  else if (length > 80) issues.push({ field, message: "must be at most 80 characters after trimming" });
  if (C0.test(trimmed)) issues.push({ field, message: "must not contain control characters" });
  // A lone surrogate (`"\ud800"` in JSON) is not a character: UTF-8 cannot hold it, so the
  // store would keep U+FFFD in its place and the echoed name would differ from the stored one.
  if (!trimmed.isWellFormed()) issues.push({ field, message: "must not contain unpaired surrogates" });
  return trimmed;
}

export function throwIfIssues(issues: FieldIssue[]): void {
  if (issues.length > 0) throw new DomainError("invalid_request", "The request is invalid.", issues);
}
