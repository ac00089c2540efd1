package dev.gatewaylb.internal.mirror;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.feature.AnswerWatcher;
import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;

/**
 * One mirrored request ({@code mirror}): a copy of an exchange's request sent to the
 * shadow service, whose answer is compared with the primary's and never reaches the
 * client.
 * <p>
 * The primary never waits for the mirror: a request without a body is mirrored when the
 * exchange starts, one with a body (at most {@code max-body}, of a declared length) once
 * the primary has read it, from a copy taken as it went by ({@link #copyBody}). The
 * exchange sends the copy ({@link Sender}) through the shadow's own send path: picked by
 * the shadow's algorithm, counted in flight, charged to the shadow's endpoint by its
 * connection's events as the primary's attempts are, never to the primary's, and given
 * up, charged to nobody, when still running {@code timeouts.response} of the shadow after
 * it started.
 * <p>
 * Comparing: each side hands in what it saw when it is done (the primary when its
 * exchange ends, as the {@link AnswerWatcher} of its answer; the shadow when its answer's
 * body ends or it fails), and the second to arrive compares: the status classes, and with
 * {@code compare: body} a CRC-32C and the length of each body, computed as the bytes
 * stream by (no copy of a body is kept). The fields of each side are written by that side
 * before it arrives, and read by the one that arrives last, after the atomic count of
 * arrivals: no lock.
 */
public final class Mirror implements AnswerWatcher {

	private static final System.Logger logger = System.getLogger(Mirror.class.getName());

	private final MirrorState state;

	private final MirrorSettings settings;

	private final Copy request;

	private final Sender sender;

	private final @Nullable Stage stage;

	private final RequestClock clock;

	private final AtomicInteger arrivals = new AtomicInteger(2);

	private final AtomicBoolean primaryEnded = new AtomicBoolean();

	/**
	 * Set once the shadow's side has begun: sent, or given up before it could be.
	 */
	private final AtomicBoolean shadowBegun = new AtomicBoolean();

	private final boolean compareBodies;

	// The primary's side: written on its exchange's threads before it arrives.

	private int primaryStatus = -1;

	private final @Nullable CRC32C primaryDigest;

	private long primaryLength;

	private volatile boolean primaryBodyEnded;

	/**
	 * Whether the primary's answer was written as a stream of flushed chunks, whose body
	 * the gateway does not see chunk by chunk: compared by status only.
	 */
	private volatile boolean primaryStreamed;

	// The shadow's side: written on its connection's event loop before it arrives.

	private volatile int shadowStatus = -1;

	private final @Nullable CRC32C shadowDigest;

	private long shadowLength;

	private Mirror(MirrorState state, MirrorSettings settings, Copy request, Sender sender, @Nullable Stage stage,
			RequestClock clock) {
		this.state = state;
		this.clock = clock;
		this.settings = settings;
		this.request = request;
		this.sender = sender;
		this.stage = stage;
		this.compareBodies = settings.compare() == MirrorSettings.Compare.BODY;
		this.primaryDigest = this.compareBodies ? new CRC32C() : null;
		this.shadowDigest = this.compareBodies ? new CRC32C() : null;
	}

	/**
	 * Mirrors a request if the settings take it: its method, its share by the request id,
	 * not a WebSocket upgrade, a body small enough of a declared length, a place among
	 * {@code max-concurrent}, a shadow to send it to. A request without a body is sent at
	 * once; one with a body once its copy is whole ({@link #copyBody}).
	 * @param state the primary service's mirroring
	 * @param settings its settings (a rollout's shadow stage has its own)
	 * @param request the primary's request
	 * @param shadowReady whether the shadow service is there to send to (its first
	 * discovery answer may be on its way)
	 * @param headers the headers the primary's request goes out with, less what the
	 * shadow's own request sets: asked once the request is taken
	 * @param sender sends the copy through the shadow's send path
	 * @param stage the rollout's shadow stage the comparison counts for, or {@code null}
	 * @param clock the request clock, whose wall clock dates a mismatch
	 * @return the mirror, or {@code null} when the request is not mirrored
	 */
	public static @Nullable Mirror start(MirrorState state, MirrorSettings settings, ServerHttpRequest request,
			boolean shadowReady, Supplier<HttpHeaders> headers, Sender sender, @Nullable Stage stage,
			RequestClock clock) {
		String method = request.getMethod().name();
		HttpHeaders requestHeaders = request.getHeaders();
		if (!settings.methods().contains(method) || !chosen(request.getId(), settings.percent())
				|| "websocket".equalsIgnoreCase(requestHeaders.getUpgrade())) {
			// A WebSocket session is not a request to replay.
			return null;
		}
		long length = requestHeaders.getContentLength();
		boolean body = length > 0 || requestHeaders.containsHeader(HttpHeaders.TRANSFER_ENCODING);
		if (!shadowReady || (body && (length < 0 || length > settings.maxBodyBytes()))) {
			// No shadow yet, or a body the mirror would have to copy without knowing how
			// much.
			state.dropped();
			return null;
		}
		if (!state.tryAcquire(settings.maxConcurrent())) {
			return null;
		}
		Mirror mirror = new Mirror(state, settings,
				new Copy(HttpMethod.valueOf(method), request.getPath().value(), headers.get(), null), sender, stage,
				clock);
		if (!body) {
			mirror.send(null);
		}
		return mirror;
	}

	/**
	 * Returns whether a request is among the {@code percent} mirrored: a stable hash of
	 * its id, so that each request is decided once however often it is asked.
	 */
	private static boolean chosen(String requestId, int percent) {
		if (percent >= 100) {
			return true;
		}
		int hash = requestId.hashCode() * 0x9E3779B9;
		return Math.floorMod(hash ^ (hash >>> 16), 100) < percent;
	}

	/**
	 * Returns the primary's request with its body copied for the mirror as it goes by:
	 * the mirror is sent with the copy once the body has gone by whole. A request the
	 * mirror sent at once (no body) is returned as it is.
	 * @param request the primary's request
	 * @return the request the primary goes on with
	 */
	public ServerHttpRequest copyBody(ServerHttpRequest request) {
		long length = request.getHeaders().getContentLength();
		return (this.shadowBegun.get() || length <= 0) ? request : new CopiedBody(request, (int) length, this);
	}

	@Override
	public void status(int status) {
		this.primaryStatus = status;
	}

	@Override
	public void body(DataBuffer chunk) {
		CRC32C digest = this.primaryDigest;
		if (digest != null) {
			try (DataBuffer.ByteBufferIterator buffers = chunk.readableByteBuffers()) {
				while (buffers.hasNext()) {
					ByteBuffer bytes = buffers.next();
					this.primaryLength += bytes.remaining();
					digest.update(bytes);
				}
			}
		}
	}

	@Override
	public void bodyEnded() {
		this.primaryBodyEnded = true;
	}

	@Override
	public void streamed() {
		this.primaryStreamed = true;
	}

	/**
	 * The primary's exchange is over, whatever its end: its side arrives. A shadow that
	 * has not begun by then never will (the primary answered before it read the body the
	 * mirror waits for): its side is given up, its place given back.
	 */
	@Override
	public void exchangeEnded() {
		if (this.primaryEnded.compareAndSet(false, true)) {
			giveUpShadow();
			arrive();
		}
	}

	/**
	 * Gives the shadow's side up if it has not begun: its place back, its arrival.
	 */
	private void giveUpShadow() {
		if (this.shadowBegun.compareAndSet(false, true)) {
			shadowEnded(-1);
		}
	}

	/**
	 * Sends the copy, once, and not after the shadow's side was given up. Never throws:
	 * what fails is the mirror's.
	 */
	private void send(byte @Nullable [] body) {
		if (!this.shadowBegun.compareAndSet(false, true)) {
			return;
		}
		Mono<Integer> answer;
		try {
			answer = this.sender.send(this.request.withBody(body), this::shadowBody);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.WARNING, "Could not mirror a request to " + this.settings.target(), ex);
			shadowEnded(-1);
			return;
		}
		answer.subscribe((status) -> this.shadowStatus = status, (error) -> shadowEnded(-1),
				() -> shadowEnded(this.shadowStatus));
	}

	private void shadowBody(ByteBuf buffer) {
		CRC32C digest = this.shadowDigest;
		if (digest != null) {
			for (ByteBuffer bytes : buffer.nioBuffers()) {
				this.shadowLength += bytes.remaining();
				digest.update(bytes);
			}
		}
	}

	/**
	 * The shadow's side is done: its place is given back, and it arrives.
	 * @param status the shadow's status, -1 for no answer
	 */
	private void shadowEnded(int status) {
		this.shadowStatus = status;
		this.state.release();
		arrive();
	}

	private void arrive() {
		if (this.arrivals.decrementAndGet() == 0) {
			compare();
		}
	}

	private void compare() {
		int primary = this.primaryStatus;
		int shadow = this.shadowStatus;
		Stage stage = this.stage;
		if (primary < 0 || shadow < 0 || (this.compareBodies && !this.primaryBodyEnded && !this.primaryStreamed)) {
			// No answer from the shadow, or none from the primary to compare it with. A
			// shadow stage counts a shadow that gave no answer as a mismatch: a target
			// that cannot answer must not wait there for ever.
			if (stage != null && primary >= 0 && shadow < 0) {
				stage.compared(true);
			}
			this.state.failed();
			return;
		}
		if (this.settings.compare() == MirrorSettings.Compare.NONE) {
			this.state.matched();
			return;
		}
		boolean statusDiffers = primary / 100 != shadow / 100;
		boolean bodyDiffers = !statusDiffers && this.compareBodies && !this.primaryStreamed
				&& (this.primaryLength != this.shadowLength
						|| this.primaryDigest.getValue() != this.shadowDigest.getValue());
		if (stage != null) {
			stage.compared(statusDiffers || bodyDiffers);
		}
		if (statusDiffers || bodyDiffers) {
			this.state.mismatched(new MirrorState.Mismatch(primary, shadow, bodyDiffers, this.request.path(),
					this.clock.currentTimeMillis()));
		}
		else {
			this.state.matched();
		}
	}

	/**
	 * The copy of a request the shadow gets.
	 *
	 * @param method the method
	 * @param path the path, without the query
	 * @param headers the headers, less what the shadow's own request sets
	 * @param body the body, or {@code null} for none
	 */
	public record Copy(HttpMethod method, String path, HttpHeaders headers, byte @Nullable [] body) {

		Copy withBody(byte @Nullable [] body) {
			return new Copy(this.method, this.path, this.headers, body);
		}

	}

	/**
	 * Sends a copy through the shadow service's own send path.
	 */
	@FunctionalInterface
	public interface Sender {

		/**
		 * Sends a copy.
		 * @param copy the copy
		 * @param body told each chunk of the shadow's answer's body, on its connection's
		 * event loop
		 * @return the shadow's status once its whole answer arrived; empty when it
		 * failed, had no endpoint, or was given up at its deadline; never an error
		 */
		Mono<Integer> send(Copy copy, Consumer<ByteBuf> body);

	}

	/**
	 * Hears what a rollout's shadow stage counts: each comparison's verdict.
	 */
	@FunctionalInterface
	public interface Stage {

		/**
		 * A mirrored request was compared.
		 * @param differs whether its answers differed, or the shadow gave none
		 */
		void compared(boolean differs);

	}

	/**
	 * The primary's request with its body copied for the mirror as it goes by.
	 */
	private static final class CopiedBody extends ServerHttpRequestDecorator {

		private final int length;

		private final Mirror mirror;

		/**
		 * The copy so far: grown as bytes arrive, up to the declared length (it is then
		 * exactly that long), so that a declared length alone allocates nothing.
		 */
		private byte[] copy = new byte[0];

		private int copied;

		CopiedBody(ServerHttpRequest delegate, int length, Mirror mirror) {
			super(delegate);
			this.length = length;
			this.mirror = mirror;
		}

		@Override
		public Flux<DataBuffer> getBody() {
			// Sent as soon as the copy is whole (a second send does nothing); given up if
			// the body ends, fails or is cancelled short of its declared length.
			return super.getBody().doOnNext(this::copy)
				.doOnComplete(this.mirror::giveUpShadow)
				.doOnError((error) -> this.mirror.giveUpShadow())
				.doOnCancel(this.mirror::giveUpShadow);
		}

		private void copy(DataBuffer buffer) {
			int length = Math.min(buffer.readableByteCount(), this.length - this.copied);
			if (length > 0) {
				if (this.copied + length > this.copy.length) {
					this.copy = Arrays.copyOf(this.copy,
							Math.min(this.length, Math.max(this.copied + length, this.copy.length * 2)));
				}
				// Read in place: the primary's read position stays where it was.
				buffer.toByteBuffer(buffer.readPosition(), length).get(this.copy, this.copied, length);
				this.copied += length;
				if (this.copied == this.length) {
					// Whole by its declared length: sent now, before the primary's
					// upstream
					// has the last bytes. Its client cancels the body it sent whole once
					// the answer has ended, which may come before the body's completion
					// reaches this copy.
					this.mirror.send(this.copy);
				}
			}
		}

	}

}
