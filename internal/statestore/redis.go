package statestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
)

// RedisPrefix starts the name of every key the trunk writes to Redis, so
// that it can share a Redis with other programs.
const RedisPrefix = "mcptrunk:"

// Redis is the Backend shared by replicas: each record a Redis string
// expired by Redis itself (PXAT). The client reconnects by itself when
// the server returns; while it is away every operation fails within its
// timeouts (a second or two) rather than waiting.
type Redis struct {
	client *redisconn.Client
	where  string
}

// OpenRedis connects to the Redis at url (redis:// or rediss://) without
// waiting for it to answer: a trunk starts while its store is down, and
// says so. Errors name trunk.state.url and never quote it.
func OpenRedis(url string) (*Redis, error) {
	opts, err := redisconn.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("trunk.state.url: not a usable Redis URL: %w", err)
	}
	opts.DialTimeout = 2 * time.Second
	opts.ReadTimeout = time.Second
	opts.WriteTimeout = time.Second
	opts.ClientName = "mcptrunk"
	return &Redis{client: redisconn.New(opts), where: config.RedactURL(url)}, nil
}

func (r *Redis) Get(ctx context.Context, name string) ([]byte, error) {
	b, err := redisconn.Bytes(r.client.Do(ctx, "GET", RedisPrefix+name))
	if errors.Is(err, redisconn.ErrNil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (r *Redis) Put(ctx context.Context, name string, record []byte, expires time.Time) error {
	var err error
	if expires.IsZero() {
		_, err = r.client.Do(ctx, "SET", RedisPrefix+name, record)
	} else {
		_, err = r.client.Do(ctx, "SET", RedisPrefix+name, record, "PXAT", toMillis(expires))
	}
	return err
}

// swapScript is Swap in Redis: compare and write in one step.
// KEYS[1] name; ARGV[1] old, ARGV[2] record, ARGV[3] expiry (Unix ms, 0
// for none).
var swapScript = redisconn.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) else redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3]) end
return 1`)

func (r *Redis) Swap(ctx context.Context, name string, old, record []byte, expires time.Time) (bool, error) {
	n, err := redisconn.Int64(swapScript.Run(ctx, r.client, []string{RedisPrefix + name}, old, record, toMillis(expires)))
	return n == 1, err
}

func (r *Redis) Take(ctx context.Context, name string) ([]byte, error) {
	b, err := redisconn.Bytes(r.client.Do(ctx, "GETDEL", RedisPrefix+name))
	if errors.Is(err, redisconn.ErrNil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (r *Redis) Delete(ctx context.Context, name string) error {
	_, err := r.client.Do(ctx, "DEL", RedisPrefix+name)
	return err
}

func (r *Redis) Ping(ctx context.Context) error {
	_, err := r.client.Do(ctx, "PING")
	return err
}

func (r *Redis) Kind() string  { return "redis" }
func (r *Redis) Where() string { return r.where }
func (r *Redis) Close() error  { return r.client.Close() }

// Client is the connection, for what needs Redis's own operations (the
// counts of trunk.limits, which must be atomic across replicas). Names
// written through it should start with RedisPrefix.
func (r *Redis) Client() *redisconn.Client { return r.client }
