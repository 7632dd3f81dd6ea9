import { Migration } from "@mikro-orm/migrations";

/**
 * Failure groups and run comparisons (issue 41; docs/rest-api.md, "Failure groups" and "Comparing
 * runs").
 *
 * A failed attempt whose cause is the test's (not the system's) gets a fingerprint from its
 * structured result, in the statement that ends it (a BEFORE trigger, so the executors' fast path
 * is covered and the test row names its group without a second write): the failed step's kind,
 * its action or method, its target (the locator as written, or the URL's path with ids and numbers
 * masked), the cause, and the summary with quoted values, ids, times and numbers masked. The group
 * of that fingerprint in the project counts it, its case (per environment) is open until the case
 * passes there again, and the group is resolved once none of its cases is open (reopened when seen
 * again). Each occurrence is kept (pruned with its run; the group's counts outlive it).
 *
 * A run remembers the names of the project's variables when it started (never values), and, once
 * finished, its base run and how many of its failures are new against it (store/settle.ts).
 */
export class Migration20261128220000_failure_groups extends Migration {
  override name = "Migration20261128220000_failure_groups";

  override up(): void | Promise<void> {
    this.addSql(`
      create table "runs"."failure_groups" (
        "id" text not null primary key,
        "project_id" text not null,
        "fingerprint" text not null,
        "step_kind" text not null,
        "action" text not null,
        "target" text not null,
        "cause" text not null,
        "message" text not null,
        "state" text not null default 'open' check (state in ('open', 'resolved', 'reopened')),
        "occurrences" int not null default 0,
        "cases_affected" int not null default 0,
        "open_cases" int not null default 0,
        "first_seen" jsonb not null,
        "last_seen" jsonb not null,
        "last_seen_at" timestamptz not null default now(),
        "resolved_at" timestamptz null,
        constraint "failure_groups_fingerprint_unique" unique ("project_id", "fingerprint"));`);
    this.addSql(
      `create index "failure_groups_by_impact" on "runs"."failure_groups" ("project_id", "state", "cases_affected" desc, "occurrences" desc, "last_seen_at" desc);`,
    );
    this.addSql(`
      create table "runs"."failure_occurrences" (
        "id" bigserial primary key,
        "group_id" text not null references "runs"."failure_groups" ("id") on delete cascade,
        "test_result_id" text not null references "runs"."test_results" ("id") on delete cascade,
        "run_id" text not null,
        "attempt" int not null,
        "test_case_id" text not null,
        "test_case_name" text not null,
        "case_version" int not null,
        "environment_id" text not null,
        "summary" text not null,
        "at" timestamptz not null default now());`);
    this.addSql(
      `create index "failure_occurrences_by_group" on "runs"."failure_occurrences" ("group_id", "at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "failure_occurrences_by_test" on "runs"."failure_occurrences" ("test_result_id");`,
    );
    this.addSql(`
      create table "runs"."failure_group_cases" (
        "group_id" text not null references "runs"."failure_groups" ("id") on delete cascade,
        "test_case_id" text not null,
        "environment_id" text not null,
        "name" text not null,
        "occurrences" int not null default 0,
        "last_seen_at" timestamptz not null default now(),
        "open" boolean not null default true,
        primary key ("group_id", "test_case_id", "environment_id"));`);
    this.addSql(
      `create index "failure_group_cases_open" on "runs"."failure_group_cases" ("test_case_id", "environment_id") where open;`,
    );
    this.addSql(
      `alter table "runs"."test_results" add "failure_group_id" text null, add "new_failure" boolean not null default false;`,
    );
    this.addSql(
      `alter table "runs"."runs" add "new_failures" int null, add "base_run_id" text null, add "variable_names" text[] null;`,
    );

    // The masks of a summary and of a URL's path (docs/rest-api.md, "Failure groups").
    this.addSql(`
      create function runs.masked_message(p text) returns text language sql immutable as $$
        select regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
          coalesce(p, ''),
          '"[^"]*"|''[^'']*''|“[^”]*”', '{s}', 'g'),
          '\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?', '{time}', 'g'),
          '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '{id}', 'g'),
          '\\m[a-z]{2,4}_[0-9a-z]{20,}\\M', '{id}', 'g'),
          '\\m[0-9a-fA-F]{16,}\\M', '{id}', 'g'),
          '\\d+(\\.\\d+)?', '{n}', 'g')
      $$;`);
    this.addSql(`
      create function runs.masked_path(p text) returns text language sql immutable as $$
        select coalesce(nullif(array_to_string(array(
          select case
            when seg ~ '^\\d+$' then '{n}'
            when seg ~ '^[0-9a-fA-F-]{16,}$' or seg ~ '^[a-z]{2,4}_[0-9a-z]{20,}$' or seg ~ '\\d' then '{id}'
            else seg end
          from unnest(string_to_array(split_part(split_part(coalesce(p, ''), '?', 1), '#', 1), '/')) with ordinality as s(seg, n)
          order by n), '/'), ''), '/')
      $$;`);

    // A locator as people read it (Playwright's selector syntax), whatever its JSON's key order.
    this.addSql(`
      create function runs.locator_text(l jsonb) returns text language sql immutable as $$
        select coalesce(case
          when l ? 'role' then 'role=' || (l->>'role') || coalesce('[name="' || (l->>'name') || '"]', '')
          when l ? 'label' then 'label=' || (l->>'label')
          when l ? 'text' then 'text=' || (l->>'text')
          when l ? 'placeholder' then 'placeholder=' || (l->>'placeholder')
          when l ? 'testId' then 'testId=' || (l->>'testId')
          when l ? 'css' then l->>'css' end, l::text)
      $$;`);

    // What a failed step is, from its snapshot: kind, action, target.
    this.addSql(`
      create function runs.failed_step_shape(p_steps jsonb, p_failed_step int, out kind text, out action text, out target text)
      language plpgsql immutable as $$
      declare
        v_step jsonb := case when p_failed_step between 1 and jsonb_array_length(p_steps) then p_steps -> (p_failed_step - 1) end;
        v_browser jsonb;
        v_detail jsonb;
      begin
        if v_step is null then
          kind := 'test'; action := ''; target := ''; return;
        end if;
        if v_step ? 'http' then
          kind := 'http';
          action := upper(coalesce(nullif(v_step #>> '{http,request,method}', ''), 'GET'));
          target := runs.masked_path(v_step #>> '{http,request,path}');
          return;
        end if;
        kind := 'browser';
        v_browser := v_step -> 'browser';
        select k into action from jsonb_object_keys(v_browser) k where k <> 'timeoutMs' limit 1;
        v_detail := v_browser -> action;
        target := case
          when v_detail ? 'locator' then runs.locator_text(v_detail -> 'locator')
          when v_detail ? 'url' then runs.masked_path(v_detail ->> 'url')
          else '' end;
        action := coalesce(action, '');
      end $$;`);

    // Records one failed attempt in its group; answers the group's id. A new group's id is `fg_` and
    // 26 random hexadecimal digits: the shape of every id the product hands out (a prefix and 26
    // characters of Crockford's alphabet), made in the statement.
    this.addSql(`
      create function runs.record_failure(p_project text, p_env text, p_test runs.test_results, p_attempt int,
        p_summary text, p_failed_step int, p_cause text) returns text language plpgsql as $$
      declare
        v_shape record;
        v_message text := runs.masked_message(p_summary);
        v_fingerprint text;
        v_seen jsonb;
        v_group text;
        v_new_case boolean;
      begin
        select * into v_shape from runs.failed_step_shape(p_test.steps, p_failed_step);
        v_fingerprint := encode(sha256(convert_to(
          v_shape.kind || chr(31) || v_shape.action || chr(31) || v_shape.target || chr(31) || p_cause || chr(31) || v_message,
          'UTF8')), 'hex');
        v_seen := jsonb_build_object('run', p_test.run_id, 'id', p_test.id, 'case', p_test.test_case_id,
          'name', p_test.name, 'v', p_test.test_case_version, 'env', p_env, 'at', now(), 'attempt', p_attempt,
          'summary', coalesce(p_summary, ''));
        insert into runs.failure_groups as g (id, project_id, fingerprint, step_kind, action, target, cause, message,
          occurrences, first_seen, last_seen, last_seen_at)
        values ('fg_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 26), p_project, v_fingerprint, v_shape.kind,
          v_shape.action, v_shape.target, p_cause, v_message, 1, v_seen, v_seen, now())
        on conflict (project_id, fingerprint) do update set occurrences = g.occurrences + 1, last_seen = excluded.last_seen,
          last_seen_at = now(), state = case when g.state = 'resolved' then 'reopened' else g.state end, resolved_at = null
        returning id into v_group;
        insert into runs.failure_occurrences (group_id, test_result_id, run_id, attempt, test_case_id, test_case_name,
          case_version, environment_id, summary)
        values (v_group, p_test.id, p_test.run_id, p_attempt, p_test.test_case_id, p_test.name, p_test.test_case_version,
          p_env, coalesce(p_summary, ''));
        insert into runs.failure_group_cases as c (group_id, test_case_id, environment_id, name, occurrences)
        values (v_group, p_test.test_case_id, p_env, p_test.name, 1)
        on conflict (group_id, test_case_id, environment_id) do update set occurrences = c.occurrences + 1,
          last_seen_at = now(), open = true, name = excluded.name
        returning (xmax = 0) into v_new_case;
        update runs.failure_groups set
          cases_affected = cases_affected + (v_new_case and not exists (
            select 1 from runs.failure_group_cases o where o.group_id = v_group and o.test_case_id = p_test.test_case_id
              and o.environment_id <> p_env))::int,
          open_cases = (select count(*) from runs.failure_group_cases o where o.group_id = v_group and o.open)
        where id = v_group;
        return v_group;
      end $$;`);

    // The trigger: a test's last attempt FAILED, or an attempt FAILED and was retried (appended to
    // earlier_attempts), each with a cause of the test's; or the test PASSED, which closes its
    // case in the groups it is open in (in the run's environment) and resolves those left with none.
    this.addSql(`
      create function runs.group_failures() returns trigger language plpgsql as $$
      declare
        v_project text;
        v_env text;
        v_ended jsonb;
        v_group text;
        v_closed text[];
      begin
        select project_id, environment_id into v_project, v_env from runs.runs where id = new.run_id;
        if new.status = 'failed' and old.status in ('queued', 'running')
           and new.cause is not null and new.cause not in ('browser', 'executor_lost', 'no_executor') then
          new.failure_group_id := runs.record_failure(v_project, v_env, new, new.attempt, new.summary, new.failed_step, new.cause);
        elsif jsonb_array_length(new.earlier_attempts) > jsonb_array_length(old.earlier_attempts) then
          v_ended := new.earlier_attempts -> (jsonb_array_length(new.earlier_attempts) - 1);
          if v_ended ->> 'status' = 'failed' and (v_ended ->> 'cause') not in ('browser', 'executor_lost', 'no_executor') then
            v_group := runs.record_failure(v_project, v_env, new, (v_ended ->> 'number')::int, v_ended ->> 'summary',
              (v_ended ->> 'failed_step')::int, v_ended ->> 'cause');
            new.earlier_attempts := jsonb_set(new.earlier_attempts, array[(jsonb_array_length(new.earlier_attempts) - 1)::text],
              v_ended || jsonb_build_object('failure_group_id', v_group));
          end if;
        elsif new.status = 'passed' and old.status in ('queued', 'running') then
          -- Two statements: the second must see the cases the first closed (one statement's
          -- sub-statements share a snapshot).
          with closed as (
            update runs.failure_group_cases c set open = false
            where c.test_case_id = new.test_case_id and c.environment_id = v_env and c.open
              and exists (select 1 from runs.failure_groups g where g.id = c.group_id and g.project_id = v_project)
            returning c.group_id)
          select array_agg(distinct group_id) into v_closed from closed;
          if v_closed is not null then
            update runs.failure_groups g set
              open_cases = o.n,
              state = case when o.n = 0 then 'resolved' else g.state end,
              resolved_at = case when o.n = 0 then now() else g.resolved_at end
            from (select g2.id, (select count(*) from runs.failure_group_cases c where c.group_id = g2.id and c.open) as n
                  from runs.failure_groups g2 where g2.id = any(v_closed)) o
            where g.id = o.id;
          end if;
        end if;
        return new;
      end $$;`);
    this.addSql(`
      create trigger test_results_group_failures before update on runs.test_results for each row
      when ((old.status in ('queued', 'running') and new.status in ('passed', 'failed'))
            or jsonb_array_length(new.earlier_attempts) > jsonb_array_length(old.earlier_attempts))
      execute function runs.group_failures();`);
  }

  override down(): void | Promise<void> {
    this.addSql("drop trigger test_results_group_failures on runs.test_results;");
    this.addSql("drop function runs.group_failures();");
    this.addSql("drop function runs.record_failure(text, text, runs.test_results, int, text, int, text);");
    this.addSql("drop function runs.failed_step_shape(jsonb, int);");
    this.addSql("drop function runs.locator_text(jsonb);");
    this.addSql("drop function runs.masked_path(text);");
    this.addSql("drop function runs.masked_message(text);");
    this.addSql(
      `alter table "runs"."runs" drop column "new_failures", drop column "base_run_id", drop column "variable_names";`,
    );
    this.addSql(
      `alter table "runs"."test_results" drop column "failure_group_id", drop column "new_failure";`,
    );
    this.addSql(`drop table "runs"."failure_group_cases";`);
    this.addSql(`drop table "runs"."failure_occurrences";`);
    this.addSql(`drop table "runs"."failure_groups";`);
  }
}
