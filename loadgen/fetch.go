package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/grpc-python-bench/loadgen/benchpb"
)

// incompleteError: a fetch-all whose calls all ended OK but that did not get every object exactly once.
type incompleteError struct{ got, distinct, want int }

func (e incompleteError) Error() string {
	return fmt.Sprintf("fetched %d objects (%d distinct), want %d", e.got, e.distinct, e.want)
}

// fetchCounts are what one fetch-all took: RPCs made, messages received, objects received.
type fetchCounts struct{ rpcs, messages, objects int64 }

// add counts one message of objects, and each object's key in seen.
func (c *fetchCounts) add(seen map[string]int, objects []*pb.ObjectInfo) {
	c.messages++
	for _, object := range objects {
		seen[object.Key]++
		c.objects++
	}
}

// runFetch: -total fetch-alls of a bucket by -clients clients, each on its own connection, each starting
// its next fetch-all when the last one ended. A fetch-all is OK when every call ended OK and it received
// each of the -expect objects exactly once. Its latency is the time to fetch everything.
func runFetch(args []string) (any, error) {
	set := flag.NewFlagSet("fetch", flag.ContinueOnError)
	target := set.String("target", "", "server address HOST:PORT")
	pattern := set.String("pattern", "stream", "paging (ListObjectsPage, following tokens) or stream (StreamObjects)")
	bucket := set.String("bucket", "", "the bucket")
	pageSize := set.Uint("page-size", 1000, "paging: objects per page")
	batch := set.Uint("batch", 1000, "stream: objects per message")
	parallelism := set.Uint("parallelism", 1, "stream: prefixes the server lists at once")
	expect := set.Int("expect", 0, "objects in the bucket: a fetch-all that gets others is Incomplete")
	clients := set.Int("clients", 1, "clients, one connection each")
	total := set.Int("total", 5, "fetch-alls in all")
	timeout := set.Duration("timeout", 300*time.Second, "deadline of each fetch-all")
	if err := parse(set, args, target); err != nil {
		return nil, err
	}
	if *bucket == "" || *expect < 1 {
		return nil, fmt.Errorf("fetch: -bucket and -expect (at least 1) are required")
	}
	if *clients < 1 || *total < *clients {
		return nil, fmt.Errorf("fetch: need 1 <= -clients <= -total, got %d and %d", *clients, *total)
	}
	var fetch func(context.Context, pb.ObjectStoreClient) (map[string]int, fetchCounts, error)
	switch *pattern {
	case "paging":
		fetch = pager(*bucket, uint32(*pageSize))
	case "stream":
		fetch = streamer(*bucket, uint32(*batch), uint32(*parallelism))
	default:
		return nil, fmt.Errorf("fetch: unknown -pattern %q: paging or stream", *pattern)
	}
	connections, closeAll, err := dialEach(*target, *clients)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	var (
		issued  atomic.Int64
		record  recorder
		workers sync.WaitGroup
		mu      sync.Mutex
		counted fetchCounts
		begun   = time.Now()
	)
	for _, conn := range connections {
		workers.Add(1)
		go func(store pb.ObjectStoreClient) {
			defer workers.Done()
			for issued.Add(1) <= int64(*total) {
				ctx, cancel := context.WithTimeout(context.Background(), *timeout)
				started := time.Now()
				seen, counts, err := fetch(ctx, store)
				if err == nil && (counts.objects != int64(*expect) || len(seen) != *expect) {
					err = incompleteError{int(counts.objects), len(seen), *expect}
				}
				record.add(time.Since(started), err)
				cancel()
				mu.Lock()
				counted.rpcs, counted.messages, counted.objects = counted.rpcs+counts.rpcs, counted.messages+counts.messages, counted.objects+counts.objects
				mu.Unlock()
			}
		}(pb.NewObjectStoreClient(conn))
	}
	workers.Wait()
	options := map[string]any{
		"pattern": *pattern, "bucket": *bucket, "page_size": *pageSize, "batch": *batch,
		"parallelism": *parallelism, "expect": *expect, "clients": *clients, "total": *total,
	}
	report := record.summary(time.Since(begun), options)
	return struct {
		ghzReport
		Rpcs     int64 `json:"rpcs"`
		Messages int64 `json:"messages"`
		Objects  int64 `json:"objects"`
	}{report, counted.rpcs, counted.messages, counted.objects}, nil
}

// pager follows ListObjectsPage's tokens from the first page to the last: one call after another, since
// each needs the previous reply's token.
func pager(bucket string, pageSize uint32) func(context.Context, pb.ObjectStoreClient) (map[string]int, fetchCounts, error) {
	return func(ctx context.Context, store pb.ObjectStoreClient) (map[string]int, fetchCounts, error) {
		seen, counts, token := map[string]int{}, fetchCounts{}, ""
		for {
			reply, err := store.ListObjectsPage(ctx, &pb.ListObjectsPageRequest{Bucket: bucket, PageSize: pageSize, PageToken: token})
			counts.rpcs++
			if err != nil {
				return seen, counts, err
			}
			counts.add(seen, reply.Objects)
			if token = reply.NextPageToken; token == "" {
				return seen, counts, nil
			}
		}
	}
}

// streamer reads one StreamObjects call to its end.
func streamer(bucket string, batch, parallelism uint32) func(context.Context, pb.ObjectStoreClient) (map[string]int, fetchCounts, error) {
	request := &pb.ListObjectsRequest{Bucket: bucket, BatchSize: batch, Parallelism: parallelism}
	return func(ctx context.Context, store pb.ObjectStoreClient) (map[string]int, fetchCounts, error) {
		seen, counts := map[string]int{}, fetchCounts{rpcs: 1}
		stream, err := store.StreamObjects(ctx, request)
		if err != nil {
			return seen, counts, err
		}
		for {
			reply, err := stream.Recv()
			if err == io.EOF {
				return seen, counts, nil
			}
			if err != nil {
				return seen, counts, err
			}
			counts.add(seen, reply.Objects)
		}
	}
}
