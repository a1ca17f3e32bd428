-- Ed25519 signature verification (RFC 8032, section 5.1.7), so that the store itself checks
-- each checkpoint's signature against the node's registered key as the checkpoint arrives
-- (docs/fleet.md, "Checked on arrival"). PostgreSQL has no Ed25519 of its own, and the
-- extensions that would bring it (an untrusted language such as PL/Python, or libsodium's)
-- need a superuser, which managed services seldom give; this needs only numeric arithmetic
-- and the built-in sha512. It verifies, never signs: no secret passes through it, so running
-- in variable time costs nothing. It takes what Go's crypto/ed25519 takes: the cofactorless
-- equation, S below the group order, the key a canonical point encoding, and R compared as
-- bytes with the encoding of [S]B - [k]A. A checkpoint costs about one verification.
--
-- A point is numeric[] of its extended coordinates (X, Y, Z, T), every one reduced mod p.

-- The little-endian integer of a byte string.
CREATE FUNCTION ed25519_int(p_bytes BYTEA) RETURNS NUMERIC
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    n NUMERIC := 0;
BEGIN
    FOR i IN REVERSE length(p_bytes) - 1 .. 0 LOOP
        n := n * 256 + get_byte(p_bytes, i);
    END LOOP;
    RETURN n;
END $$;

-- The 32-byte little-endian encoding of 0 <= n < 2^256.
CREATE FUNCTION ed25519_bytes(p_n NUMERIC) RETURNS BYTEA
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    b BYTEA := decode(repeat('00', 32), 'hex');
    n NUMERIC := p_n;
BEGIN
    FOR i IN 0 .. 31 LOOP
        b := set_byte(b, i, mod(n, 256)::INT);
        n := div(n, 256);
    END LOOP;
    RETURN b;
END $$;

-- base^exponent mod p, for p = 2^255 - 19.
CREATE FUNCTION ed25519_pow(p_base NUMERIC, p_exponent NUMERIC) RETURNS NUMERIC
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    p CONSTANT NUMERIC := 57896044618658097711785492504343953926634992332820282019728792003956564819949;
    r NUMERIC := 1;
    b NUMERIC := mod(p_base, p);
    e NUMERIC := p_exponent;
BEGIN
    WHILE e > 0 LOOP
        IF mod(e, 2) = 1 THEN
            r := mod(r * b, p);
        END IF;
        b := mod(b * b, p);
        e := div(e, 2);
    END LOOP;
    RETURN r;
END $$;

-- P + Q on edwards25519 (RFC 8032, 5.1.4).
CREATE FUNCTION ed25519_add(p_p NUMERIC[], p_q NUMERIC[]) RETURNS NUMERIC[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    p CONSTANT NUMERIC := 57896044618658097711785492504343953926634992332820282019728792003956564819949;
    d2 CONSTANT NUMERIC := 16295367250680780974490674513165176452449235426866156013048779062215315747161;
    a NUMERIC := mod((p_p[2] - p_p[1] + p) * (p_q[2] - p_q[1] + p), p);
    b NUMERIC := mod((p_p[2] + p_p[1]) * (p_q[2] + p_q[1]), p);
    c NUMERIC := mod(mod(p_p[4] * p_q[4], p) * d2, p);
    d NUMERIC := mod(2 * p_p[3] * p_q[3], p);
    e NUMERIC := b - a + p;
    f NUMERIC := d - c + p;
    g NUMERIC := d + c;
    h NUMERIC := b + a;
BEGIN
    RETURN ARRAY[mod(e * f, p), mod(g * h, p), mod(f * g, p), mod(e * h, p)];
END $$;

-- 2P on edwards25519 (RFC 8032, 5.1.4's doubling: two multiplications fewer than P + P).
CREATE FUNCTION ed25519_double(p_p NUMERIC[]) RETURNS NUMERIC[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    p CONSTANT NUMERIC := 57896044618658097711785492504343953926634992332820282019728792003956564819949;
    a NUMERIC := mod(p_p[1] * p_p[1], p);
    b NUMERIC := mod(p_p[2] * p_p[2], p);
    c NUMERIC := mod(2 * p_p[3] * p_p[3], p);
    h NUMERIC := a + b;
    e NUMERIC := h - mod((p_p[1] + p_p[2]) * (p_p[1] + p_p[2]), p) + p;
    g NUMERIC := a - b + p;
    f NUMERIC := c + g;
BEGIN
    RETURN ARRAY[mod(e * f, p), mod(g * h, p), mod(f * g, p), mod(e * h, p)];
END $$;

-- The 32-byte encoding of a point (RFC 8032, 5.1.2).
CREATE FUNCTION ed25519_encode(p_point NUMERIC[]) RETURNS BYTEA
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    p CONSTANT NUMERIC := 57896044618658097711785492504343953926634992332820282019728792003956564819949;
    z NUMERIC := public.ed25519_pow(p_point[3], p - 2);
    b BYTEA := public.ed25519_bytes(mod(p_point[2] * z, p));
BEGIN
    IF mod(mod(p_point[1] * z, p), 2) = 1 THEN
        b := set_byte(b, 31, get_byte(b, 31) | 128);
    END IF;
    RETURN b;
END $$;

-- The point a 32-byte encoding stands for (RFC 8032, 5.1.3), or NULL if it stands for none.
CREATE FUNCTION ed25519_decode(p_bytes BYTEA) RETURNS NUMERIC[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    p CONSTANT NUMERIC := 57896044618658097711785492504343953926634992332820282019728792003956564819949;
    d CONSTANT NUMERIC := 37095705934669439343138083508754565189542113879843219016388785533085940283555;
    sqrt_m1 CONSTANT NUMERIC := 19681161376707505956807079304988542015446066515923890162744021073123829784752;
    -- (p - 5) / 8
    root CONSTANT NUMERIC := 7237005577332262213973186563042994240829374041602535252466099000494570602493;
    sign INT;
    y NUMERIC;
    y2 NUMERIC;
    u NUMERIC;
    v NUMERIC;
    v3 NUMERIC;
    x NUMERIC;
    vx2 NUMERIC;
BEGIN
    IF length(p_bytes) <> 32 THEN
        RETURN NULL;
    END IF;
    sign := get_byte(p_bytes, 31) >> 7;
    y := public.ed25519_int(set_byte(p_bytes, 31, get_byte(p_bytes, 31) & 127));
    IF y >= p THEN
        RETURN NULL;
    END IF;
    y2 := mod(y * y, p);
    u := mod(y2 - 1 + p, p);
    v := mod(d * y2 + 1, p);
    v3 := mod(mod(v * v, p) * v, p);
    x := mod(mod(u * v3, p) * public.ed25519_pow(mod(mod(u * v3, p) * mod(v3 * v, p), p), root), p);
    vx2 := mod(mod(x * x, p) * v, p);
    IF vx2 <> u THEN
        IF vx2 <> mod(p - u, p) THEN
            RETURN NULL;
        END IF;
        x := mod(x * sqrt_m1, p);
    END IF;
    IF x = 0 AND sign = 1 THEN
        RETURN NULL;
    END IF;
    IF mod(x, 2) <> sign THEN
        x := p - x;
    END IF;
    RETURN ARRAY[x, y, 1, mod(x * y, p)];
END $$;

-- Whether `p_signature` (64 bytes: R || S) is a signature of `p_message` by the Ed25519
-- public key `p_key` (32 bytes). False, never an error, for malformed input.
CREATE FUNCTION ed25519_verify(p_key BYTEA, p_message BYTEA, p_signature BYTEA) RETURNS BOOLEAN
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    p CONSTANT NUMERIC := 57896044618658097711785492504343953926634992332820282019728792003956564819949;
    l CONSTANT NUMERIC := 7237005577332262213973186563042994240857116359379907606001950938285454250989;
    base CONSTANT NUMERIC[] := ARRAY[
        15112221349535400772501151409588531511454012693041857206046113283949847762202,
        46316835694926478169428394003475163141307993866256225615783033603165251855960, 1,
        46827403850823179245072216630277197565144205554125654976674165829533817101731];
    a NUMERIC[];
    b_minus_a NUMERIC[];
    k BYTEA;
    q NUMERIC[] := ARRAY[0, 1, 1, 0];
    s_bit INT;
    k_bit INT;
BEGIN
    IF length(p_key) <> 32 OR length(p_signature) <> 64
       OR public.ed25519_int(substring(p_signature FROM 33)) >= l THEN
        RETURN FALSE;
    END IF;
    a := public.ed25519_decode(p_key);
    IF a IS NULL THEN
        RETURN FALSE;
    END IF;
    -- -A, and B - A for the steps where both scalars have a bit.
    a := ARRAY[mod(p - a[1], p), a[2], a[3], mod(p - a[4], p)];
    b_minus_a := public.ed25519_add(base, a);
    k := public.ed25519_bytes(mod(public.ed25519_int(
        sha512(substring(p_signature FROM 1 FOR 32) || p_key || p_message)), l));
    -- [S]B + [k](-A), both scalars at once, from the top bit down.
    FOR i IN REVERSE 255 .. 0 LOOP
        q := public.ed25519_double(q);
        s_bit := (get_byte(p_signature, 32 + i / 8) >> (i % 8)) & 1;
        k_bit := (get_byte(k, i / 8) >> (i % 8)) & 1;
        IF s_bit = 1 AND k_bit = 1 THEN
            q := public.ed25519_add(q, b_minus_a);
        ELSIF s_bit = 1 THEN
            q := public.ed25519_add(q, base);
        ELSIF k_bit = 1 THEN
            q := public.ed25519_add(q, a);
        END IF;
    END LOOP;
    RETURN public.ed25519_encode(q) = substring(p_signature FROM 1 FOR 32);
END $$;
