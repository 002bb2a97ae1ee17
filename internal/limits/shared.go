package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/redisconn"
)

// check is the whole of a check in Redis, run atomically: the GCRA of
// allowHere and the daily count, over every count a request falls in.
// Times are whole microseconds of the Unix epoch: ARGV[1], or Redis's
// own clock when it is empty, so that every replica reads one clock (a
// rule of more than a million requests a second per count holds no one).
// Then three arguments per key: "g", the interval and the window for a
// rule with a window; "d" and the requests per day for a daily one. A
// refusal changes nothing and returns {now, the key's index, the wait};
// otherwise every count moves and it returns {now, 0, 0}. A bucket's key
// expires when it is full again; a day's count holds "<day> <n>" and
// expires a minute after that day ends.
var check = redisconn.NewScript(`
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local dayLen = 86400000000
local today = math.floor(now / dayLen)
local midnight = (today + 1) * dayLen
local refused, wait = 0, -1
local next, count = {}, {}
for i, key in ipairs(KEYS) do
  local kind, a = ARGV[3*i - 1], tonumber(ARGV[3*i])
  local v = redis.call('GET', key)
  if kind == 'd' then
    local n = 0
    if v then
      local day, c = string.match(v, '^(%d+) (%d+)$')
      if tonumber(day) == today then n = tonumber(c) end
    end
    count[i] = n + 1
    if n >= a and midnight - now > wait then refused, wait = i, midnight - now end
  else
    local tat = tonumber(v) or now
    if tat < now then tat = now end
    next[i] = tat + a
    local allowAt = next[i] - tonumber(ARGV[3*i + 1])
    if now < allowAt and allowAt - now > wait then refused, wait = i, allowAt - now end
  end
end
if refused > 0 then return {now, refused, wait} end
for i, key in ipairs(KEYS) do
  if next[i] then
    redis.call('SET', key, string.format('%.0f', next[i]), 'PX', math.max(1, math.ceil((next[i] - now) / 1000)))
  else
    redis.call('SET', key, string.format('%.0f %d', today, count[i]), 'PX', math.ceil((midnight - now) / 1000) + 60000)
  end
end
return {now, 0, 0}
`)

// allowShared is Allow with the counts in the shared store: one round
// trip, the script check.
func (l *Limiter) allowShared(ctx context.Context, matched []*rule, req Request) (Refusal, bool, error) {
	keys := make([]string, len(matched))
	args := make([]any, 1, 1+3*len(matched))
	args[0] = ""
	if l.clock != nil {
		args[0] = strconv.FormatInt(l.clock().UnixMicro(), 10)
	}
	for i, r := range matched {
		keys[i] = r.key(l.prefix+"limit:"+r.tag, req)
		if r.limit.Daily {
			args = append(args, "d", r.limit.Requests, 0)
		} else {
			args = append(args, "g", r.interval.Microseconds(), r.limit.Window.D().Microseconds())
		}
	}
	res, err := redisconn.Int64s(check.Run(ctx, l.shared, keys, args...))
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("the limit script answered %v", res)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return Refusal{}, true, ctx.Err() // the request is gone: nothing to answer
		}
		return Refusal{}, !l.allowUnavailable, &UnavailableError{Limit: matched[0].name, Store: l.store, Allowed: l.allowUnavailable, Err: err}
	}
	if res[1] == 0 {
		return Refusal{}, false, nil
	}
	i := int(res[1]) - 1
	if i < 0 || i >= len(matched) {
		return Refusal{}, !l.allowUnavailable, &UnavailableError{Limit: matched[0].name, Store: l.store, Allowed: l.allowUnavailable,
			Err: fmt.Errorf("the limit script named key %d of %d", i+1, len(matched))}
	}
	return matched[i].refusal(time.UnixMicro(res[0]), time.Duration(res[2])*time.Microsecond), true, nil
}
