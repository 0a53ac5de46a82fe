-- One rate-limit decision, atomically: GCRA, as auth.MemoryLimiter.
-- KEYS[1]: the bucket's key, holding its TAT (the time at which the
--          bucket is full again) in microseconds.
-- ARGV[1]: now in microseconds, or -1 for the server's clock.
-- ARGV[2]: the interval between tokens, in microseconds.
-- ARGV[3]: the window, interval × requests, in microseconds.
-- Returns {allowed (0|1), remaining, reset µs, retry-after µs}.
local now = tonumber(ARGV[1])
if now < 0 then
	local t = redis.call('TIME')
	now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local interval = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
	tat = now
elseif tat - now > window then
	tat = now + window -- a lowered limit: never owe more than one window
end
local nextTat = tat + interval
local allowAt = nextTat - window
if now < allowAt then
	return {0, 0, tat - now, allowAt - now}
end
-- The key expires when the bucket is full again (at nextTat).
redis.call('SET', KEYS[1], string.format('%d', nextTat), 'PX', math.max(1, math.ceil((nextTat - now) / 1000)))
return {1, math.floor((now - allowAt) / interval), nextTat - now, 0}
