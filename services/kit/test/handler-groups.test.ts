// A service put together from handler groups starts only when the groups answer every method:
// one left out would answer UNIMPLEMENTED to callers long after the deploy.
import { Health } from "@testrun/gen/grpc/health/v1/health_pb";
import { expect } from "chai";
import { fromHandlerGroups } from "../src/rpc/server.js";

describe("fromHandlerGroups", () => {
  const check = () => ({});
  const list = () => ({});
  async function* watch() {}

  it("puts the groups' methods together into one implementation", () => {
    const impl = fromHandlerGroups(Health, { check, list }, { watch });
    expect(impl.check).to.equal(check);
    expect(impl.list).to.equal(list);
    expect(impl.watch).to.equal(watch);
  });

  it("refuses to start when a method is left out, naming it", () => {
    expect(() => fromHandlerGroups(Health, { check }, { list })).to.throw(
      "Health methods not implemented: Watch",
    );
  });
});
