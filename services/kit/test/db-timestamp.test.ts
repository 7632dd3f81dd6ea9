// dbDate against what PostgreSQL really sends: raw queries through MikroORM hand timestamptz back
// as text, entities as Dates; both must read as the same instant.
import { EntitySchema } from "@mikro-orm/core";
import { expect } from "chai";
import { dbDate, dbDateOrNull, type Orm, openDatabase } from "../src/db.js";

/** openDatabase wants one entity; this test only runs raw queries. */
const Probe = new EntitySchema<{ id: string }>({
  name: "Probe",
  tableName: "probe",
  properties: { id: { type: "string", primary: true } },
});

describe("dbDate", () => {
  let orm: Orm;
  before(async () => {
    orm = await openDatabase(process.env.DATABASE_URL ?? "", {
      schema: "public",
      entities: [Probe],
      migrations: [],
    });
  });
  after(() => orm?.close(true));

  const select = async (literal: string) => {
    const [row] = await orm.em.fork().execute<{ at: string }[]>(`select '${literal}'::timestamptz as at`);
    return row?.at ?? "";
  };

  it("reads PostgreSQL's text form to the millisecond, whatever the session's offset", async () => {
    const text = await select("2026-11-22 06:13:34.016347+00");
    expect(text).to.be.a("string");
    expect(dbDate(text).toISOString()).to.equal("2026-11-22T06:13:34.016Z");
    expect(dbDate("2026-11-22 08:13:34.5+02").toISOString()).to.equal("2026-11-22T06:13:34.500Z");
    expect(dbDate("2026-11-22 11:43:34+05:30").toISOString()).to.equal("2026-11-22T06:13:34.000Z");
  });

  it("reads years before 100 as they are (Date's fallback parser makes 0050 into 1950)", async () => {
    const text = await select("0050-01-01 00:00:00+00");
    expect(dbDate(text).getUTCFullYear()).to.equal(50);
  });

  it("passes Dates through, and null as null", () => {
    const at = new Date("2026-11-22T06:13:34.016Z");
    expect(dbDate(at)).to.equal(at);
    expect(dbDateOrNull(null)).to.equal(null);
  });
});
