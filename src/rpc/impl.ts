import type { DescMessage, DescMethodUnary, DescService, MessageShape } from "@bufbuild/protobuf";
import type { Maybe } from "../domain/maybe.ts";
import type { CallContext } from "./context.ts";

type UnaryMethodImpl<M> =
  M extends DescMethodUnary<infer I extends DescMessage, infer O extends DescMessage>
    ? (request: MessageShape<I>, context: CallContext) => Maybe<MessageShape<O>>
    : never;

/**
 * A service implementation as plain functions over a CallContext: assignable to connect's
 * ServiceImpl (its HandlerContext has `values`), and callable in process by the tests without a
 * transport. A method may answer synchronously (`Maybe`, domain/maybe.ts): Connect takes either.
 */
export type Impl<S extends DescService> = {
  [K in keyof S["method"]]: UnaryMethodImpl<S["method"][K]>;
};
