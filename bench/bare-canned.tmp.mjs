import Koa from 'koa';

const body = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
  totalResults: 1,
  startIndex: 1,
  itemsPerPage: 1,
  Resources: [
    {
      schemas: [
        'urn:ietf:params:scim:schemas:core:2.0:User',
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      ],
      id: '5f0c4a67-43fe-4000-9bfb-682c30396620',
      userName: 'user5000@corp.example',
      externalId: '00u000005000',
      name: { givenName: 'Given5000', familyName: 'Family5000', formatted: 'Given5000 Family5000' },
      displayName: 'Given5000 Family5000',
      title: 'Engineer 2',
      active: true,
      emails: [{ type: 'work', value: 'user5000@corp.example', primary: true }],
      phoneNumbers: [{ type: 'work', value: '+1 555 0005000' }],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': {
        department: 'Dept 0',
        employeeNumber: '5000',
      },
      groups: [
        {
          value: '6f0c4a67-43fe-4000-9bfb-682c30396620',
          display: 'Everyone',
          $ref: 'http://127.0.0.1:19100/scim/v2/e09bd744-a33e-45f3-a7d2-2a5d58d32bd4/Groups/6f0c4a67-43fe-4000-9bfb-682c30396620',
          type: 'direct',
        },
      ],
      meta: {
        resourceType: 'User',
        created: '2026-11-22T08:18:26.499Z',
        lastModified: '2026-11-22T08:18:26.499Z',
        location:
          'http://127.0.0.1:19100/scim/v2/e09bd744-a33e-45f3-a7d2-2a5d58d32bd4/Users/5f0c4a67-43fe-4000-9bfb-682c30396620',
      },
    },
  ],
};
const app = new Koa();
app.use(async (ctx) => {
  void ctx.query.userName;
  ctx.type = 'application/json';
  ctx.body = structuredClone(body);
});
app.listen(Number(process.env.PORT), '127.0.0.1');
