/** Security requirement of a bearer route; its error responses come from operations.ts. */
export const bearerSecurity = [{ bearer: [] }];
