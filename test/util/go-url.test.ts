/** URLs split as Go's net/url.Parse splits them (webhook URLs, CEL's url library), and the errors it gives. */
import { parseUrl as parseGoUrl } from '../../src/util/go-url';

describe('parseUrl', () => {
  it('splits scheme, user information, host, query and fragment', () => {
    expect(parseGoUrl('HTTPS://u:p%20w@hook.example.com:8443/a/b?x=1&y#top')).toMatchObject({
      scheme: 'https',
      user: 'u:p w',
      host: 'hook.example.com:8443',
      path: '/a/b',
      rawQuery: 'x=1&y',
      fragment: 'top',
    });
    expect(parseGoUrl('https://hook.example.com/x').user).toBeUndefined();
    expect(parseGoUrl('https://[::1]:443/x')).toMatchObject({ host: '[::1]:443' });
  });

  it('has no host for opaque, relative or triple-slash URLs', () => {
    expect(parseGoUrl('https:hook.example.com')).toMatchObject({ scheme: 'https', host: '' });
    expect(parseGoUrl('hook.example.com/x')).toMatchObject({ scheme: '', host: '' });
    expect(parseGoUrl('https:///x')).toMatchObject({ scheme: 'https', host: '' });
  });

  it.each([
    ['://x', 'parse "://x": missing protocol scheme'],
    ['https://[::1/x', `parse "https://[::1/x": missing ']' in host`],
    ['https://host:port/', 'parse "https://host:port/": invalid port ":port" after host'],
    ['https://ho st/', 'parse "https://ho st/": invalid character " " in host name'],
    ['https://host/%zz', 'parse "https://host/%zz": invalid URL escape "%zz"'],
    ['https://host/#%z', 'parse "https://host/#%z": invalid URL escape "%z"'],
    ['1a:b/c', 'parse "1a:b/c": first path segment in URL cannot contain colon'],
    ['https://host/\n', 'parse "https://host/\\n": net/url: invalid control character in URL'],
  ])('refuses %j as Go does', (url, message) => {
    expect(() => parseGoUrl(url)).toThrow(message);
  });
});
