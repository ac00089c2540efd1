package dev.gatewaylb.internal.upstream;

import dev.gatewaylb.gateway.upstream.UpstreamObserver;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request's call on its channel: found by the request that started it and by no other,
 * its header deadline armed at the send and never left waiting in the event loop's queue
 * once the request is over, however it ended.
 */
class UpstreamCallTests {

	private final EmbeddedChannel channel = new EmbeddedChannel();

	private final Object request = new Object();

	private final Recorder observer = new Recorder();

	UpstreamCallTests() {
		this.channel.freezeTime();
	}

	@AfterEach
	void close() {
		this.channel.finishAndReleaseAll();
	}

	@Test
	void isFoundByItsRequestOnly() {
		UpstreamCall.prepared(this.request, this.channel, this.observer, Duration.ofSeconds(30));
		assertThat(UpstreamCall.of(this.request, this.channel)).isNotNull();
		assertThat(UpstreamCall.of(new Object(), this.channel)).isNull();
	}

	@Test
	void armsTheDeadlineAtTheSendAndDisarmsItAtTheHeaders() {
		UpstreamCall.prepared(this.request, this.channel, this.observer, Duration.ofSeconds(30));
		assertThat(pendingTimers()).as("nothing before the send").isFalse();
		UpstreamCall call = UpstreamCall.of(this.request, this.channel);
		call.sent();
		assertThat(pendingTimers()).isTrue();
		call.headers(200);
		assertThat(pendingTimers()).isFalse();
		assertThat(this.observer.events).containsExactly("sent", "headers 200");
	}

	@Test
	void leavesNoTimerWhenTheRequestEndsWithoutItsHeaders() {
		// A connection lost before the headers reaches none of the client's response
		// callbacks; the connection's end does.
		UpstreamCall.prepared(this.request, this.channel, this.observer, Duration.ofSeconds(30));
		UpstreamCall.of(this.request, this.channel).sent();
		UpstreamCall.forget(this.channel);
		assertThat(pendingTimers()).isFalse();
		assertThat(UpstreamCall.of(this.request, this.channel)).isNull();
	}

	@Test
	void theNextRequestOnTheConnectionReplacesTheLastOnesCallAndItsTimer() {
		UpstreamCall.prepared(this.request, this.channel, this.observer, Duration.ofSeconds(30));
		UpstreamCall.of(this.request, this.channel).sent();
		Object next = new Object();
		UpstreamCall.prepared(next, this.channel, this.observer, Duration.ofSeconds(30));
		assertThat(pendingTimers()).isFalse();
		assertThat(UpstreamCall.of(this.request, this.channel)).isNull();
		assertThat(UpstreamCall.end(next, this.channel)).isNotNull();
		assertThat(UpstreamCall.end(next, this.channel)).as("ended once").isNull();
	}

	@Test
	void aWebSocketHandshakeIsSentAtOnceAndItsAnswerFoundByTheChannelAlone() {
		// Reactor Netty replaces the request's operations with the session's before the
		// handshake is written, and reports no end of sending for it.
		UpstreamCall.handshake(this.channel, this.observer, Duration.ofSeconds(30));
		assertThat(pendingTimers()).as("the deadline runs from the handshake").isTrue();
		UpstreamCall call = UpstreamCall.take(this.channel);
		assertThat(call).isNotNull();
		call.headers(101);
		assertThat(pendingTimers()).isFalse();
		assertThat(UpstreamCall.take(this.channel)).isNull();
		assertThat(this.observer.events).containsExactly("sent", "headers 101");
	}

	@Test
	void aWebSocketHandshakeWithoutAnswerTimesOutWhateverItsOperations() {
		UpstreamCall.handshake(this.channel, this.observer, Duration.ofSeconds(30));
		this.channel.advanceTimeBy(30, java.util.concurrent.TimeUnit.SECONDS);
		this.channel.runScheduledPendingTasks();
		assertThat(this.channel.isOpen()).as("closed by the deadline").isFalse();
		org.assertj.core.api.Assertions.assertThatThrownBy(this.channel::checkException)
			.isSameAs(io.netty.handler.timeout.ReadTimeoutException.INSTANCE);
	}

	@Test
	void aRequestWithNeitherObserverNorDeadlineHasNoCall() {
		UpstreamCall.prepared(this.request, this.channel, null, null);
		assertThat(UpstreamCall.of(this.request, this.channel)).isNull();
	}

	private boolean pendingTimers() {
		return this.channel.runScheduledPendingTasks() != -1;
	}

	private static final class Recorder implements UpstreamObserver {

		final List<String> events = new ArrayList<>();

		@Override
		public @Nullable Duration requestPrepared(EventLoop eventLoop) {
			return null;
		}

		@Override
		public void requestSent() {
			this.events.add("sent");
		}

		@Override
		public void responseReceived(int status) {
			this.events.add("headers " + status);
		}

		@Override
		public void responseCompleted() {
			this.events.add("completed");
		}

		@Override
		public void responseFailed(Throwable error) {
			this.events.add("failed");
		}

	}

}
