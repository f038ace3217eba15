import LedgerStore
import Testing

@Test("SQL scripts split on semicolons outside quotes, dollar bodies and comments")
func splitSQL() {
    let script = """
        -- a comment; with a semicolon
        CREATE TABLE a (x text DEFAULT 'it''s; fine');
        CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'no; way'; END;
        $$;
        /* block; comment */ SELECT "odd;name" FROM a;
        SELECT $tag$ x; $tag$
        """
    let statements = SQLScript.statements(script)
    #expect(statements.count == 4)
    #expect(statements[0].hasSuffix("DEFAULT 'it''s; fine')"))
    #expect(statements[1].contains("RAISE EXCEPTION 'no; way'; END;"))
    #expect(statements[2].hasSuffix(#"SELECT "odd;name" FROM a"#))
    #expect(statements[3] == "SELECT $tag$ x; $tag$")
}
