import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/** Serves an in-memory MongoDB on HOST:PORT that reports MongoDB 6.0 (wire version 17). */
public class Launcher {
    enum Version6 implements MongoVersion {
        MONGO_6_0;

        public List<Integer> getVersionArray() { return List.of(6, 0, 0); }

        public String toVersionString() { return "6.0.0"; }

        public int getWireVersion() { return 17; }
    }

    public static void main(String[] args) throws InterruptedException {
        String host = args.length > 1 ? args[1] : "127.0.0.1";
        int port = Integer.parseInt(args[0]);
        MongoServer server = new MongoServer(new MemoryBackend().version(Version6.MONGO_6_0));
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        server.bind(host, port);
        System.out.println("mongo-java-server listening on " + host + ":" + port);
        new CountDownLatch(1).await();
    }
}
