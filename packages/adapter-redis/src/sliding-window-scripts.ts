import { defineLuaScript } from './lua-script.js';

/**
 * Sliding-window log, one sorted set per key: each allowed call adds one member
 * `<cost>:<random id>` scored by the Redis server's time in ms (`TIME`), so
 * every replica shares one clock. A second key keeps the summed cost so a call
 * only reads the members that expire. Units count while `now < score + windowMs`.
 *
 * KEYS[1] log (sorted set), KEYS[2] summed cost (string integer).
 */
const PREAMBLE = `
local log, total = KEYS[1], KEYS[2]
local window = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function costOf(member)
  return tonumber(string.match(member, '^(%d+):'))
end
`;

/**
 * Removes the expired units and sets `used` to the units left in the window:
 * the running total less the expired ones, or a recount when the total was
 * lost. `changed` tells whether the total must be written back.
 */
const PRUNED_USED = `
local used = tonumber(redis.call('GET', total))
local changed = false
if used == nil then
  used = 0
  for _, member in ipairs(redis.call('ZRANGE', log, 0, -1)) do used = used + costOf(member) end
  changed = used > 0
end
local expired = redis.call('ZRANGEBYSCORE', log, '-inf', now - window)
if #expired > 0 then
  for _, member in ipairs(expired) do used = used - costOf(member) end
  redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
  changed = true
end
`;

/**
 * ARGV: windowMs, limit, cost, id. Atomically prunes expired units, then
 * counts `cost` when it fits under `limit` (a refused call writes nothing but
 * the pruning). Returns `{ allowed (1|0), remaining, retryAfterMs }`, where
 * `retryAfterMs` is when enough of the oldest units expire for `cost` to fit.
 */
export const consumeScript = defineLuaScript(`${PREAMBLE}
local limit, cost, id = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
${PRUNED_USED}
if used + cost <= limit then
  used = used + cost
  redis.call('ZADD', log, now, cost .. ':' .. id)
  redis.call('PEXPIRE', log, window)
  redis.call('SET', total, used, 'PX', window)
  return {1, limit - used, 0}
end

if changed then
  if used > 0 then
    redis.call('SET', total, used, 'PX', math.max(1, redis.call('PTTL', log)))
  else
    redis.call('DEL', log, total)
  end
end

local remaining = math.max(0, limit - used)
local needed = used + cost - limit
local freed = 0
local offset = 0
while true do
  -- every entry frees at least 1 unit, so at most (needed - freed) more entries are read
  local count = math.min(needed - freed, 128)
  local batch = redis.call('ZRANGE', log, offset, offset + count - 1, 'WITHSCORES')
  if #batch == 0 then break end
  for i = 1, #batch, 2 do
    freed = freed + costOf(batch[i])
    if freed >= needed then
      return {0, remaining, tonumber(batch[i + 1]) + window - now}
    end
  end
  offset = offset + count
end
return {0, remaining, window}
`);

/**
 * ARGV: windowMs, cost. Atomically prunes expired units, then takes back up
 * to `cost` units, the most recently counted first (a member worth more than
 * what is left to take back is replaced by one worth the difference, at the
 * same score). Returns the units taken back.
 */
export const refundScript = defineLuaScript(`${PREAMBLE}
local cost = tonumber(ARGV[2])
${PRUNED_USED}
local refunded = 0
while refunded < cost do
  local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
  if #newest == 0 then break end
  local member, score = newest[1], newest[2]
  local worth = costOf(member)
  local taken = math.min(worth, cost - refunded)
  -- the remainder goes in before the member leaves: emptying the log would delete it with its expiry
  if taken < worth then
    redis.call('ZADD', log, score, (worth - taken) .. string.sub(member, string.len(tostring(worth)) + 1))
  end
  redis.call('ZREM', log, member)
  refunded = refunded + taken
end
used = used - refunded
if used > 0 then
  redis.call('SET', total, used, 'PX', math.max(1, redis.call('PTTL', log)))
else
  redis.call('DEL', log, total)
end
return refunded
`);

/** ARGV: windowMs. Returns the units counted within the last `windowMs`; writes nothing. */
export const peekScript = defineLuaScript(`${PREAMBLE}
local used = 0
for _, member in ipairs(redis.call('ZRANGEBYSCORE', log, '(' .. (now - window), '+inf')) do
  used = used + costOf(member)
end
return used
`);
