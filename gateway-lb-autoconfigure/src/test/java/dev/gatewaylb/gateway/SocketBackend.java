package dev.gatewaylb.gateway;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A backend on a plain socket on 127.0.0.1, for answers no HTTP server would send: each
 * accepted connection is handed to {@code serve} on a daemon thread of its own (a
 * {@code serve} that returns leaves the connection open, silent). Counts the connections
 * it accepted, and closes them all with itself.
 */
final class SocketBackend implements AutoCloseable {

	private final ServerSocket listener;

	private final List<Socket> accepted = new CopyOnWriteArrayList<>();

	SocketBackend(String name, Consumer<Socket> serve) {
		try {
			this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		Thread acceptor = new Thread(() -> {
			while (!this.listener.isClosed()) {
				try {
					Socket socket = this.listener.accept();
					this.accepted.add(socket);
					Thread serving = new Thread(() -> serve.accept(socket), name + "-connection");
					serving.setDaemon(true);
					serving.start();
				}
				catch (IOException closed) {
					return;
				}
			}
		}, name);
		acceptor.setDaemon(true);
		acceptor.start();
	}

	int port() {
		return this.listener.getLocalPort();
	}

	int accepted() {
		return this.accepted.size();
	}

	@Override
	public void close() throws IOException {
		this.listener.close();
		for (Socket socket : this.accepted) {
			socket.close();
		}
	}

}
