-- The first position among 1 … p_size whose event was recorded after p_at, or NULL if none: a
-- binary search by position, which is exact because times rise along the log (an append takes
-- its time under the head's lock, never below the previous one's: 0037). About log₂(p_size)
-- reads of the primary key; no index on the time, so appends pay nothing for it.
CREATE OR REPLACE FUNCTION ledger_first_recorded_after(p_at timestamptz, p_size int8) RETURNS int8
LANGUAGE plpgsql STABLE AS $$
DECLARE
    lo int8 := 1;
    -- Never past the head: a position the log does not hold has no time to compare.
    hi int8 := least(p_size, (SELECT h.position FROM ledger_head h)) + 1;
    mid int8;
BEGIN
    -- Every position below lo was recorded at or before p_at; every one from hi on, after it.
    WHILE lo < hi LOOP
        mid := lo + (hi - lo) / 2;
        IF (SELECT e.recorded_at FROM ledger_events e WHERE e.position = mid) > p_at THEN
            hi := mid;
        ELSE
            lo := mid + 1;
        END IF;
    END LOOP;
    RETURN CASE WHEN lo <= p_size THEN lo END;
END;
$$;
