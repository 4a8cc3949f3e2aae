/// Swift's `description` of a `Double` or a `Float` as SQL, for a migration that makes such an
/// attribute a `String`: decimal notation with at least one fraction digit (`100.0`, `0.0001`)
/// from 10⁻⁴ up to the largest integer of the type's significand (2⁵³, 2²⁴), else the shortest
/// digits with an exponent (`1e-05`, `1e+16`); `inf`, `-inf`, `nan`, `-0.0`.
///
/// On SQLite the runtime registers the functions, written in Swift
/// (`SQLiteDatabase+FloatingPointFunctions.swift`). On PostgreSQL a migration creates them in
/// `pg_temp` (`createFunction`), on the server's own shortest digits (`extra_float_digits` above 0,
/// which the migration sets), with one difference mended: PostgreSQL writes the shortest digits
/// strictly inside the interval of decimals that read back as the number, where Swift also takes a
/// shorter decimal on the interval's edge when the number's significand is even (reading rounds a
/// tie to even). So 10²³ (exactly halfway between two doubles) is `1e+23` in Swift and
/// `9.999999999999999e+22` in PostgreSQL, and the `Float` 2.15 × 10⁹ is `2.15e+09` and
/// `2.1500001e+09`. Only numbers beyond the significand's integers have such edges (below, a
/// halfway point has more digits than any double), so only the exponent form looks for them.
enum FloatingPointText {
    /// The function for `Double` (`double: true`) or `Float`.
    static func functionName(double: Bool) -> String {
        double ? SQLNames.doubleTextFunction : SQLNames.floatTextFunction
    }

    /// The PostgreSQL statement that creates the function for `Double` (`double: true`) or `Float`
    /// in `pg_temp`, taking `double precision` or `real`.
    static func createFunction(double: Bool) -> String {
        let type = double ? "double precision" : "real"
        // The significand's bits, and its largest integer: the end of decimal notation.
        let bits = double ? 53 : 24
        let limit = double ? "9007199254740992" : "16777216"
        let smallestSignificand = double ? "4503599627370496" : "8388608"
        // The largest finite value, whose upper edge reads as infinity (PostgreSQL raises).
        let greatest = double ? "1.7976931348623157e308" : "3.4028234663852886e38"
        return """
            CREATE OR REPLACE FUNCTION pg_temp.\(functionName(double: double))(modelgen_value \(type)) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $modelgen$
            DECLARE
                modelgen_text text := CAST(modelgen_value AS text);
                modelgen_magnitude double precision := abs(CAST(modelgen_value AS double precision));
                modelgen_exponent integer;
                modelgen_significand bigint;
                modelgen_exact numeric;
                modelgen_spelled numeric;
                modelgen_edge numeric;
                modelgen_edge_text text;
                modelgen_digits text;
            BEGIN
                IF modelgen_value = 'Infinity' THEN RETURN 'inf'; END IF;
                IF modelgen_value = '-Infinity' THEN RETURN '-inf'; END IF;
                IF modelgen_value = 'NaN' THEN RETURN 'nan'; END IF;
                IF modelgen_value = 0 THEN RETURN CASE WHEN modelgen_text = '-0' THEN '-0.0' ELSE '0.0' END; END IF;
                IF modelgen_magnitude < 0.0001 THEN RETURN modelgen_text; END IF;
                IF modelgen_magnitude <= \(limit) THEN
                    -- PostgreSQL writes 100 or 1e+15: the exact numeric of its text spells them out.
                    modelgen_spelled := CAST(modelgen_text AS numeric);
                    RETURN CASE WHEN modelgen_spelled = trunc(modelgen_spelled) THEN CAST(trunc(modelgen_spelled) AS text) || '.0' ELSE CAST(modelgen_spelled AS text) END;
                END IF;
                -- An integer: significand · 2^(exponent - \(bits - 1)), exactly; its interval's edges lie half
                -- a unit of the significand's last place away (a quarter below, for a power of two).
                modelgen_exponent := least(floor(ln(modelgen_magnitude) / ln(2)), 1023);
                IF power(CAST(2 AS double precision), modelgen_exponent) > modelgen_magnitude THEN
                    modelgen_exponent := modelgen_exponent - 1;
                ELSIF modelgen_magnitude / 2 >= power(CAST(2 AS double precision), modelgen_exponent) THEN
                    modelgen_exponent := modelgen_exponent + 1;
                END IF;
                modelgen_significand := CAST(modelgen_magnitude / power(CAST(2 AS double precision), modelgen_exponent - \(bits - 1)) AS bigint);
                modelgen_exact := modelgen_significand * trunc(power(CAST(2 AS numeric), modelgen_exponent - \(bits - 1)));
                FOREACH modelgen_edge IN ARRAY ARRAY[
                    modelgen_exact + trunc(power(CAST(2 AS numeric), modelgen_exponent - \(bits))),
                    modelgen_exact - trunc(power(CAST(2 AS numeric), modelgen_exponent - CASE WHEN modelgen_significand = \(smallestSignificand) THEN \(bits + 1) ELSE \(bits) END))
                ] LOOP
                    CONTINUE WHEN modelgen_edge > modelgen_exact AND modelgen_magnitude = \(greatest);
                    modelgen_edge_text := CAST(modelgen_edge AS text);
                    modelgen_digits := rtrim(modelgen_edge_text, '0');
                    IF CAST(modelgen_edge_text AS \(type)) = abs(modelgen_value)
                        AND length(modelgen_digits) < length(replace(split_part(ltrim(modelgen_text, '-'), 'e', 1), '.', '')) THEN
                        RETURN CASE WHEN modelgen_value < 0 THEN '-' ELSE '' END
                            || left(modelgen_digits, 1) || CASE WHEN length(modelgen_digits) > 1 THEN '.' || substr(modelgen_digits, 2) ELSE '' END
                            || 'e+' || CASE WHEN length(modelgen_edge_text) <= 10 THEN '0' ELSE '' END || CAST(length(modelgen_edge_text) - 1 AS text);
                    END IF;
                END LOOP;
                RETURN modelgen_text;
            END $modelgen$;
            """
    }
}
