package dev.gatewaylb.gateway;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import dev.gatewaylb.internal.loadreports.LoadReportsState;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
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

	/**
	 * ORCA's per-call load report, which a server with per-call reporting sends in its
	 * trailers.
	 */
	static final Metadata.Key<byte[]> LOAD_REPORT = Metadata.Key.of("endpoint-load-metrics-bin",
			Metadata.BINARY_BYTE_MARSHALLER);

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
			.set("gateway.lb.services.catalog.load-reports.enabled", true)
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

	@Test
	void aLoadReportInTheTrailersIsReadAndKeptFromTheClient() {
		AtomicReference<Metadata> trailers = new AtomicReference<>();
		byte[] answer = ClientCalls.blockingUnaryCall(
				ClientInterceptors.intercept(this.channel,
						MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers)),
				FIND, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
				"apple".getBytes(StandardCharsets.UTF_8));
		assertThat(new String(answer, StandardCharsets.UTF_8)).isEqualTo("found apple");
		assertThat(trailers.get()).isNotNull();
		assertThat(trailers.get().containsKey(LOAD_REPORT)).as("kept from the client").isFalse();
		assertThat(trailers.get().get(TRACE)).as("the other trailers pass").isEqualTo("trace-7");
		LoadReportsState state = ready("catalog").feature(LoadReportsState.class);
		var report = state.report(this.runtimes.snapshot("catalog"), this.runtimes.nanoTime());
		assertThat(report).isNotNull();
		assertThat(report.endpoints().get(0).applicationUtilization()).isEqualTo(0.5);
		assertThat(report.endpoints().get(0).cpuUtilization()).isEqualTo(0.25);
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
		// Every answer with messages ends with a load report and a trace id in its
		// trailers: cpu_utilization (field 1) 0.25, application_utilization (9) 0.5.
		ServerInterceptor reporting = new ServerInterceptor() {
			@Override
			public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
					ServerCallHandler<Q, A> next) {
				return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
					@Override
					public void close(Status status, Metadata trailers) {
						if (status.isOk()) {
							trailers.put(LOAD_REPORT, orcaReport());
							trailers.put(TRACE, "trace-7");
						}
						super.close(status, trailers);
					}
				}, headers);
			}
		};
		try (InputStream certificate = new ClassPathResource("tls/server.pem").getInputStream();
				InputStream key = new ClassPathResource("tls/server-key.pem").getInputStream()) {
			return NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", 0))
				.sslContext(GrpcSslContexts.forServer(certificate, key).build())
				.addService(ServerInterceptors.intercept(catalog, reporting))
				.build()
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static byte[] orcaReport() {
		java.nio.ByteBuffer proto = java.nio.ByteBuffer.allocate(18).order(java.nio.ByteOrder.LITTLE_ENDIAN);
		proto.put((byte) ((1 << 3) | 1)).putDouble(0.25);
		proto.put((byte) ((9 << 3) | 1)).putDouble(0.5);
		return proto.array();
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
