package dev.gatewaylb.compat;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A gateway as a user writes it: the starter on the classpath, an application class,
 * routes and {@code gateway.lb} settings in {@code application.yml}.
 */
@SpringBootApplication
public class CompatGateway {

}
