package dev.gatewaylb.internal.exchange;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.mirror.MirrorState;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.mirror.MirrorSettings;
import dev.gatewaylb.internal.upstream.Outcome;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * One mirrored request ({@code mirror}): a copy of an exchange's request sent to the
 * shadow service, whose answer is compared with the primary's and never reaches the
 * client.
 * <p>
 * The primary never waits for the mirror: a request without a body is mirrored when the
 * exchange starts, one with a body (at most {@code max-body}, of a declared length) once
 * the primary has read it, from a copy taken as it went by. The mirror is an attempt of
 * the shadow service like any other (picked by the shadow's algorithm, counted in flight,
 * charged to the shadow's endpoint by passive health, never to the primary's), sent
 * through the shadow's own pools; it is cancelled, and charged to nobody, when it is
 * still running {@code timeouts.response} of the shadow after it started.
 * <p>
 * Comparing: each side hands in what it saw when it is done (the primary when its
 * exchange ends, the shadow when its answer's body ends or it fails), and the second to
 * arrive compares: the status classes, and with {@code compare: body} a CRC-32C and the
 * length of each body, computed as the bytes stream by (no copy of a body is kept). The
 * fields of each side are written by that side before it arrives, and read by the one
 * that arrives last, after the atomic count of arrivals: no lock.
 */
final class Mirror {

	private static final System.Logger logger = System.getLogger(Mirror.class.getName());

	/**
	 * The settings of each rollout target's shadow stage, made once per target.
	 */
	private static final Map<String, MirrorSettings> SHADOW_STAGES = new ConcurrentHashMap<>();

	private final ProxiedExchange owner;

	private final MirrorState state;

	private final MirrorSettings settings;

	private final ServiceRuntime shadow;

	private final HttpMethod method;

	private final String path;

	private final ExchangeLease lease = new ExchangeLease();

	private final AtomicInteger arrivals = new AtomicInteger(2);

	private final AtomicBoolean primaryEnded = new AtomicBoolean();

	/**
	 * Set once the shadow's side has begun: sent, or given up before it could be.
	 */
	private final AtomicBoolean shadowBegun = new AtomicBoolean();

	/**
	 * The request's headers for the shadow, as the gateway's header filters make them for
	 * the primary: taken when the exchange starts.
	 */
	private final HttpHeaders headers;

	private final boolean compareBodies;

	/**
	 * The rollout whose shadow stage counts the comparison, or {@code null}.
	 */
	private final @Nullable RolloutTrack shadowStage;

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

	private int shadowStatus = -1;

	private final @Nullable CRC32C shadowDigest;

	private long shadowLength;

	private volatile boolean timedOut;

	private Mirror(ProxiedExchange owner, MirrorState state, MirrorSettings settings, ServiceRuntime shadow,
			HttpMethod method, String path, HttpHeaders headers, @Nullable RolloutTrack shadowStage) {
		this.owner = owner;
		this.headers = headers;
		this.shadowStage = shadowStage;
		this.state = state;
		this.settings = settings;
		this.shadow = shadow;
		this.method = method;
		this.path = path;
		this.compareBodies = settings.compare() == MirrorSettings.Compare.BODY;
		this.primaryDigest = this.compareBodies ? new CRC32C() : null;
		this.shadowDigest = this.compareBodies ? new CRC32C() : null;
	}

	/**
	 * Mirrors the owner's exchange if the service's settings take it: its method, its
	 * share by the request id, a body small enough of a declared length, a place among
	 * {@code max-concurrent}, a shadow service to send it to. A request with a body has
	 * its body copied as the primary reads it: the owner's exchange is replaced by one
	 * whose request hands out the same bytes.
	 * @param owner the exchange's owner
	 * @param primary the service's runtime
	 * @param settings its mirroring
	 * @param shadowStage the rollout whose shadow stage the comparison counts for, or
	 * {@code null}
	 * @return the mirror, or {@code null} when the request is not mirrored
	 */
	static @Nullable Mirror start(ProxiedExchange owner, ServiceRuntime primary, MirrorSettings settings,
			@Nullable RolloutTrack shadowStage) {
		ServerWebExchange exchange = owner.exchange();
		ServerHttpRequest request = exchange.getRequest();
		String method = request.getMethod().name();
		if (!settings.methods().contains(method) || !chosen(request.getId(), settings.percent())
				|| "websocket".equalsIgnoreCase(request.getHeaders().getUpgrade())) {
			// A WebSocket session is not a request to replay.
			return null;
		}
		MirrorState state = primary.feature(MirrorState.class);
		String target = settings.target();
		ServiceRuntime shadow = (target != null) ? owner.services().runtimes().find(target) : null;
		HttpHeaders headers = request.getHeaders();
		long length = headers.getContentLength();
		boolean body = RequestBodyIdle.hasBody(headers);
		if (shadow == null || !shadow.isBalancedHere() || (body && (length < 0 || length > settings.maxBodyBytes()))) {
			// No shadow yet (its first discovery answer is on its way), or a body the
			// mirror would have to copy without knowing how much.
			state.dropped();
			return null;
		}
		if (!state.tryAcquire(settings.maxConcurrent())) {
			return null;
		}
		// The headers the primary's request goes out with (hop-by-hop ones removed,
		// X-Forwarded-* added), less what the shadow's own request sets.
		HttpHeaders filtered = new HttpHeaders();
		filtered.putAll(HttpHeadersFilter.filterRequest(owner.services().headersFilters().get(), exchange));
		filtered.remove(HttpHeaders.HOST);
		filtered.remove(HttpHeaders.CONTENT_LENGTH);
		filtered.remove(HttpHeaders.TRANSFER_ENCODING);
		Mirror mirror = new Mirror(owner, state, settings, shadow, HttpMethod.valueOf(method),
				request.getPath().value(), filtered, shadowStage);
		owner.lease().mirror(mirror);
		if (!body) {
			mirror.send(null);
		}
		else {
			owner.replaceExchange(exchange.mutate().request(new CopiedBody(request, (int) length, mirror)).build());
		}
		return mirror;
	}

	/**
	 * Returns the mirroring of a rollout's shadow stage: every GET and HEAD of the split,
	 * the status compared, at most 64 in flight.
	 * @param target the rollout's target
	 * @return the settings
	 */
	static MirrorSettings shadowStage(String target) {
		// Bounded by the rollouts' targets.
		return SHADOW_STAGES.computeIfAbsent(target,
				(key) -> new MirrorSettings(key.toLowerCase(Locale.ROOT), 100, MirrorSettings.NONE.maxConcurrent(),
						MirrorSettings.NONE.maxBodyBytes(), MirrorSettings.Compare.STATUS,
						MirrorSettings.NONE.methods()));
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
	 * Notes the status of the primary's answer, when an upstream answered the client.
	 * @param status the status
	 */
	void primaryAnswered(int status) {
		this.primaryStatus = status;
	}

	/**
	 * Adds a chunk of the primary's answer to its digest, as the gateway writes it.
	 * @param buffer the chunk, left as it is
	 */
	void primaryBody(DataBuffer buffer) {
		CRC32C digest = this.primaryDigest;
		if (digest != null) {
			try (DataBuffer.ByteBufferIterator buffers = buffer.readableByteBuffers()) {
				while (buffers.hasNext()) {
					ByteBuffer bytes = buffers.next();
					this.primaryLength += bytes.remaining();
					digest.update(bytes);
				}
			}
		}
	}

	/**
	 * Notes that the primary's answer was written whole.
	 */
	void primaryBodyEnded() {
		this.primaryBodyEnded = true;
	}

	/**
	 * Notes that the primary's answer is written as a stream of flushed chunks.
	 */
	void primaryStreamed() {
		this.primaryStreamed = true;
	}

	/**
	 * Notes that the primary's exchange is over, whatever its end: its side arrives. A
	 * shadow that has not begun by then never will (the primary answered before it read
	 * the body the mirror waits for): its side is given up, its place given back.
	 */
	void primaryEnded() {
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
			this.shadowStatus = -1;
			shadowEnded();
		}
	}

	/**
	 * Sends the mirror: picks an endpoint of the shadow, claims it, and sends the request
	 * through the shadow's client; once, and not after the shadow's side was given up.
	 * Never throws: what fails is the mirror's.
	 * @param body the request's body, or {@code null} for none
	 */
	void send(byte @Nullable [] body) {
		if (!this.shadowBegun.compareAndSet(false, true)) {
			return;
		}
		Attempt attempt = null;
		try {
			Snapshot<Member> snapshot = this.shadow.snapshot();
			int index = snapshot.select(null);
			if (index < 0) {
				this.shadowStatus = -1;
				shadowEnded();
				return;
			}
			attempt = new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), this.shadow, snapshot.value(index),
					this.lease, false, 0, null, -1);
			this.lease.hold(attempt);
			send(attempt, body);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.WARNING, "Could not mirror a request to " + this.shadow.id(), ex);
			if (attempt != null) {
				attempt.end(Outcome.Kind.CANCELLED);
			}
			this.lease.close();
			this.shadowStatus = -1;
			shadowEnded();
		}
	}

	private void send(Attempt attempt, byte @Nullable [] body) {
		Flux<Integer> answer = this.shadow.upstream()
			.client()
			.headers((out) -> this.headers.forEach(out::add))
			.request(this.method)
			.uri(this.owner.endpointUrl(attempt.member()))
			.send((request, out) -> (body != null) ? out.sendByteArray(Mono.just(body)) : out)
			.response((response, content) -> {
				int status = response.status().code();
				this.shadowStatus = status;
				// Charged now, as the owner charges a failure status at the primary's
				// headers: the attempt's end may be ours before the connection's.
				if (Outcome.ofStatus(status, attempt.countsAsFailure(status)) == Outcome.Kind.SERVER_ERROR) {
					attempt.settle(Outcome.Kind.SERVER_ERROR);
				}
				return content.doOnNext(this::shadowBody).then(Mono.just(status));
			})
			.contextWrite(attempt.context());
		Duration deadline = this.shadow.settings().upstream().responseTimeout();
		if (!deadline.isZero()) {
			// Still running a response timeout after it started: cancelled, and, as any
			// cancellation of ours, charged to nobody (the lease says so before the
			// cancel reaches the connection).
			answer = answer.takeUntilOther(Mono.delay(deadline).doOnNext((tick) -> {
				this.timedOut = true;
				this.lease.clientGone();
			}));
		}
		answer.doFinally((signal) -> {
			int status = this.shadowStatus;
			if (signal == SignalType.ON_COMPLETE && !this.timedOut && status >= 0) {
				// The whole answer: charged by its status (the connection's own end may
				// come later and finds it settled).
				attempt.end(Outcome.ofStatus(status, attempt.countsAsFailure(status)));
			}
			else {
				// Failed (settled by the error, below) or cancelled by us.
				attempt.end(Outcome.Kind.CANCELLED);
				this.shadowStatus = -1;
			}
			this.lease.close();
			shadowEnded();
		}).subscribe(null, (error) -> attempt.end(Outcome.classify(attempt.phase(), error)));
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
	 */
	private void shadowEnded() {
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
		RolloutTrack stage = this.shadowStage;
		// After a time-out the shadow's fields may still be written on its connection's
		// event loop: they are not read then.
		int shadow = this.timedOut ? -1 : this.shadowStatus;
		if (primary < 0 || shadow < 0 || (this.compareBodies && !this.primaryBodyEnded && !this.primaryStreamed)) {
			// No answer from the shadow, or none from the primary to compare it with. A
			// shadow stage counts a shadow that gave no answer as a mismatch: a target
			// that cannot answer must not wait there for ever.
			if (stage != null && primary >= 0 && shadow < 0) {
				stage.shadowAnswered(true);
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
			stage.shadowAnswered(statusDiffers || bodyDiffers);
		}
		if (statusDiffers || bodyDiffers) {
			this.state.mismatched(
					new MirrorState.Mismatch(primary, shadow, bodyDiffers, this.path, System.currentTimeMillis()));
		}
		else {
			this.state.matched();
		}
	}

	/**
	 * The primary's request with its body copied for the mirror as it goes by; the mirror
	 * is sent with the copy once the body has gone by whole.
	 */
	private static final class CopiedBody extends ServerHttpRequestDecorator {

		private final int length;

		private final Mirror mirror;

		/**
		 * The copy so far: grown as bytes arrive, up to the declared length, so that a
		 * declared length alone allocates nothing.
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
			return super.getBody().doOnNext(this::copy).doOnComplete(() -> {
				if (this.copied != this.length) {
					// Shorter than it declared: nothing whole to mirror.
					this.mirror.giveUpShadow();
				}
				else {
					this.mirror
						.send((this.copy.length == this.length) ? this.copy : Arrays.copyOf(this.copy, this.length));
				}
			}).doOnError((error) -> this.mirror.giveUpShadow()).doOnCancel(this.mirror::giveUpShadow);
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
			}
		}

	}

}
