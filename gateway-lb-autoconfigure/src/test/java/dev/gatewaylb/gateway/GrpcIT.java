package dev.gatewaylb.gateway;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.io.ClassPathResource;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A grpc-java client calling a grpc-java server through the gateway: h2c from the client,
 * h2 over TLS to the endpoint. A call the server fails at once is answered trailers-only
 * (one HEADERS frame); the client must still get every trailer: the status, its
 * {@code ErrorInfo} details and the server's own metadata.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GrpcIT extends GatewayIntegrationTest {

	static final Metadata.Key<String> TRACE = Metadata.Key.of("x-trace-id", Metadata.ASCII_STRING_MARSHALLER);

	static final MethodDescriptor<byte[], byte[]> FIND = MethodDescriptor.<byte[], byte[]>newBuilder()
		.setType(MethodDescriptor.MethodType.UNARY)
		.setFullMethodName("test.Catalog/Find")
		.setRequestMarshaller(new Bytes())
		.setResponseMarshaller(new Bytes())
		.build();

	static final Server server = start();

	ManagedChannel channel;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		String route = "spring.cloud.gateway.server.webflux.routes[0]";
		registry.add(route + ".id", () -> "catalog");
		registry.add(route + ".uri", () -> "lb://catalog");
		registry.add(route + ".predicates[0]", () -> "Path=/test.Catalog/**");
		TestGateway.properties(registry)
			.uris("catalog", List.of("https://127.0.0.1:" + server.getPort()))
			.set("gateway.lb.services.catalog.http2", true)
			.set("gateway.lb.services.catalog.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("server.http2.enabled", true);
	}

	@BeforeEach
	void openChannel() {
		this.channel = NettyChannelBuilder.forAddress("127.0.0.1", this.port).usePlaintext().build();
	}

	@AfterEach
	void closeChannel() throws InterruptedException {
		this.channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
	}

	@AfterAll
	static void stop() throws InterruptedException {
		server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
	}

	@Test
	void aCallAnsweredWithAMessageGetsIt() {
		byte[] answer = ClientCalls.blockingUnaryCall(this.channel, FIND,
				CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "apple".getBytes(StandardCharsets.UTF_8));
		assertThat(new String(answer, StandardCharsets.UTF_8)).isEqualTo("found apple");
	}

	@Test
	void aTrailersOnlyErrorKeepsItsDetailsAndTheServersMetadata() {
		StatusRuntimeException error = catchThrowableOfType(StatusRuntimeException.class,
				() -> ClientCalls.blockingUnaryCall(this.channel, FIND,
						CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
						"missing".getBytes(StandardCharsets.UTF_8)));
		assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
		assertThat(error.getStatus().getDescription()).isEqualTo("no such item: missing");
		assertThat(error.getTrailers()).isNotNull();
		assertThat(error.getTrailers().get(TRACE)).as("the server's own trailer").isEqualTo("trace-42");
		com.google.rpc.Status details = StatusProto.fromThrowable(error);
		assertThat(details).as("grpc-status-details-bin").isNotNull();
		assertThat(details.getDetailsList()).hasSize(1);
		assertThat(details.getDetails(0).is(ErrorInfo.class)).isTrue();
	}

	private static Server start() {
		ServerServiceDefinition catalog = ServerServiceDefinition.builder("test.Catalog")
			.addMethod(FIND, ServerCalls.asyncUnaryCall((request, responses) -> {
				String item = new String(request, StandardCharsets.UTF_8);
				if (item.equals("missing")) {
					// Failed before any message: grpc-java answers trailers-only.
					Metadata trailers = new Metadata();
					trailers.put(TRACE, "trace-42");
					com.google.rpc.Status status = com.google.rpc.Status.newBuilder()
						.setCode(Code.NOT_FOUND.getNumber())
						.setMessage("no such item: " + item)
						.addDetails(Any.pack(ErrorInfo.newBuilder()
							.setReason("ITEM_MISSING")
							.setDomain("catalog.test")
							.putMetadata("item", item)
							.build()))
						.build();
					responses.onError(StatusProto.toStatusRuntimeException(status, trailers));
					return;
				}
				responses.onNext(("found " + item).getBytes(StandardCharsets.UTF_8));
				responses.onCompleted();
			}))
			.build();
		try (InputStream certificate = new ClassPathResource("tls/server.pem").getInputStream();
				InputStream key = new ClassPathResource("tls/server-key.pem").getInputStream()) {
			return NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
				.sslContext(GrpcSslContexts.forServer(certificate, key).build())
				.addService(catalog)
				.build()
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Messages as raw bytes: no generated code.
	 */
	static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {

		@Override
		public InputStream stream(byte[] value) {
			return new ByteArrayInputStream(value);
		}

		@Override
		public byte[] parse(InputStream stream) {
			try {
				return stream.readAllBytes();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
