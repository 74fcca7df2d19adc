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
	"google.golang.org/grpc"
)

// runCall: -total calls of one RPC by -concurrency workers on one connection, each starting its next
// call when the last one ended (ghz's closed loop and count mode).
func runCall(args []string) (any, error) {
	set := flag.NewFlagSet("call", flag.ContinueOnError)
	target := set.String("target", "", "server address HOST:PORT")
	method := set.String("method", "hello", "hello (SayHello), hello-stream (SayHelloStream) or stream-objects")
	bucket := set.String("bucket", "", "stream-objects: the bucket")
	batch := set.Uint("batch", 1, "stream-objects: objects per message")
	concurrency := set.Int("concurrency", 1, "workers")
	total := set.Int("total", 100, "calls in all")
	timeout := set.Duration("timeout", 120*time.Second, "deadline of each call")
	if err := parse(set, args, target); err != nil {
		return nil, err
	}
	if *concurrency < 1 || *total < *concurrency {
		return nil, fmt.Errorf("call: need 1 <= -concurrency <= -total, got %d and %d", *concurrency, *total)
	}
	conn, err := dial(*target)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	call, err := caller(conn, *method, *bucket, uint32(*batch))
	if err != nil {
		return nil, err
	}
	var (
		issued   atomic.Int64
		record   recorder
		workers  sync.WaitGroup
		begun    = time.Now()
		calls    = int64(*total)
		deadline = *timeout
	)
	for range *concurrency {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for issued.Add(1) <= calls {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				started := time.Now()
				err := call(ctx)
				record.add(time.Since(started), err)
				cancel()
			}
		}()
	}
	workers.Wait()
	options := map[string]any{"method": *method, "concurrency": *concurrency, "total": *total, "batch": *batch}
	return record.summary(time.Since(begun), options), nil
}

// caller is one call of the named RPC; a stream counts as one call, read to its end.
func caller(conn *grpc.ClientConn, method, bucket string, batch uint32) (func(context.Context) error, error) {
	greeter, store := pb.NewGreeterClient(conn), pb.NewObjectStoreClient(conn)
	hello := &pb.HelloRequest{Name: "loadgen"}
	switch method {
	case "hello":
		return func(ctx context.Context) error {
			_, err := greeter.SayHello(ctx, hello)
			return err
		}, nil
	case "hello-stream":
		return func(ctx context.Context) error {
			stream, err := greeter.SayHelloStream(ctx, hello)
			if err != nil {
				return err
			}
			return drain(stream.Recv)
		}, nil
	case "stream-objects":
		if bucket == "" {
			return nil, fmt.Errorf("call: stream-objects needs -bucket")
		}
		request := &pb.ListObjectsRequest{Bucket: bucket, BatchSize: batch}
		return func(ctx context.Context) error {
			stream, err := store.StreamObjects(ctx, request)
			if err != nil {
				return err
			}
			return drain(stream.Recv)
		}, nil
	}
	return nil, fmt.Errorf("call: unknown -method %q: hello, hello-stream or stream-objects", method)
}

// drain reads a server stream to its end; nil when it ended with OK.
func drain[T any](receive func() (T, error)) error {
	for {
		if _, err := receive(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
